"""Design-storm runoff: TR-55 and the Rational Method, pre- against post-development.

Modules: :mod:`params` (the ruleset's ``[hydrology]`` section), :mod:`tr55` (curve-number
runoff, time of concentration, unit peak discharge), :mod:`rational` (Q = CiA and WQv),
:mod:`cover` (sub-areas from soils x land cover x impervious), :mod:`site` (one drainage
area's calculation, the rows of the calculation sheet).
"""
