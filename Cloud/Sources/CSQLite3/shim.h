// The system's SQLite (Debian: libsqlite3-dev; macOS: the SDK's), called directly by the
// cloud's SQLite engine so that a statement runs on the thread that asks for it.
#include <sqlite3.h>
