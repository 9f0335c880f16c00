"""Town layers and proposals: specs, reading (any format, PostGIS), validation, rasters."""
