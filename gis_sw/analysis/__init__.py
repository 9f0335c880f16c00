"""Rules of the law as vectorised checks: findings, the rule table and the engine."""
