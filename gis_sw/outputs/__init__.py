"""Outputs: findings as GeoJSON (RFC 7946) and GeoPackage, summaries, maps, web map."""
