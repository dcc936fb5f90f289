"""The Apple family: `.strings`, `.stringsdict`, String Catalogs (`.xcstrings`) and property lists (plist, bplist)."""
