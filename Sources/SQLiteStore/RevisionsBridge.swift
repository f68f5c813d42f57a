// SQLiteSheetStore+Revisions.swift is compiled into this module from Sources/SheetStore, where it
// stays until the catalog revisions are written once over `SQLSession` (issue 42 item 8); it does
// not import SheetStore itself. Remove this file when it moves here.
@_exported public import SheetStore
