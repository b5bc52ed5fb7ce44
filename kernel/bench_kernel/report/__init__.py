"""Reports: finding the report builder and format of a stored run (bench-report's), or the kernel's short summary without them."""
