// The module an app imports: the service below, and the engine's types it takes and returns.
@_exported import SuggestCore
@_exported import SuggestShare
@_exported import SuggestSQLiteStore
