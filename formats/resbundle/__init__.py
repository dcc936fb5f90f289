"""ICU resource bundles: the text source format (`.txt`, compiled by genrb) and the binary format (`.res`)."""
