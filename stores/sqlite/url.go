package sqlite

import (
	"fmt"
	"strings"
)

// URLPrefix starts an SQLite store URL: sqlite:PATH, sqlite://PATH or
// sqlite:///ABSOLUTE/PATH.
const URLPrefix = "sqlite:"

// IsURL reports whether s is an SQLite store URL (it starts with sqlite:).
func IsURL(s string) bool { return strings.HasPrefix(s, URLPrefix) }

// PathFromURL returns the database file that an SQLite store URL names:
// sqlite:ratchet.db and sqlite://ratchet.db name ratchet.db (relative to the
// working directory), sqlite:///var/lib/ratchet.db and
// sqlite:/var/lib/ratchet.db the absolute path. It fails on a string that is
// not such a URL or that names no file.
func PathFromURL(s string) (string, error) {
	if !IsURL(s) {
		return "", fmt.Errorf("sqlite: %q is not an SQLite URL (sqlite:PATH or sqlite:///ABSOLUTE/PATH)", s)
	}
	path := strings.TrimPrefix(strings.TrimPrefix(s, URLPrefix), "//")
	if path == "" {
		return "", fmt.Errorf("sqlite: %q names no database file (sqlite:PATH or sqlite:///ABSOLUTE/PATH)", s)
	}
	return path, nil
}
