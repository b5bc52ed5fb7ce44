"""Reports: figures computed from the store, plugin report sections, and the json format (the text formats: bench-report)."""
