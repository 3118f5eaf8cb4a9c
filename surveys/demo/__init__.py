"""Demo studies shipped with hedgelab (data files + loader); see loader.py."""
