"""The writes of the API and the dashboard, one function per action on a resource: one request, one commit with
its summary, action and trailers (storage/trailers.py), the domain operations (storage/operations.py) inside it.

Routes (app/routes/) and pages (app/web/) parse the request, find what it names (app/lookup.py), call here, and
render what the committed snapshot holds (app/records.py). A refusal inside a write (an ApiError, a storage
error) leaves the project as it was: nothing is committed.
"""
