"""The XML family: XLIFF, TMX, Android/Java/Tizen resources, Qt Linguist TS and .NET ResX.

Every reader parses through `parsing.parse_xml`, the one hardened parser (no entity resolution by
libxml2, no DTD loading, no network, a size limit).
"""
