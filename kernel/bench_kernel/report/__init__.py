"""Reports: figures computed from the store, plugin report sections, rendering."""
