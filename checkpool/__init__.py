"""The checks of a locale's chunks, in this process or in a pool of worker processes (issue 23: a cold check of
100k translations). No Flask: a pool worker imports this package, quality/ and storage.canonical only.

    chunk.check_chunk(assets, sources, targets, locale, source_locale, glossary): one chunk's records
    pool.check_chunks(numbers, job, here): many chunks, shared between the pool and the calling thread
"""
