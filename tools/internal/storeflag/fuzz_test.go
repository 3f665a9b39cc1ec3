package storeflag

import (
	"net/url"
	"strings"
	"testing"

	"github.com/ratchet-go/ratchet/stores/sqlite"
	"github.com/stretchr/testify/assert"
)

// FuzzRedacted: a store URL with a password, however odd its parts, is
// never shown with the password (Redacted is what every message of the
// ratchet command names a store by).
func FuzzRedacted(f *testing.F) {
	f.Add("postgres", "ann", "s3cret-pw", "127.0.0.1:5432", "test")
	f.Add("mysql", "root", "p@ss:w/rd?#", "db.example.com", "ratchet")
	f.Add("sqlserver", "sa", "Passw0rd!", "host:1433", "")
	f.Add("mongodb", "u", "%41%42%43pw", "[::1]:27017", "r")
	f.Fuzz(func(t *testing.T, scheme, user, password, host, path string) {
		u := url.URL{Scheme: scheme, User: url.UserPassword(user, password), Host: host, Path: "/" + path}
		spec := u.String()
		rest := u
		rest.User = nil
		shows := func(s string) bool {
			return strings.Contains(s, password) || strings.Contains(s, url.QueryEscape(password)) || strings.Contains(s, url.PathEscape(password))
		}
		if len(password) < 4 || shows(rest.String()+" "+user+" "+url.PathEscape(user)) {
			return // too short to look for, or written elsewhere in the URL too
		}
		if got := Redacted(spec); shows(got) {
			t.Fatalf("Redacted(%q) = %q shows the password", spec, got)
		}
	})
}

// FuzzSQLitePathFromURL: any --store value either names a file or fails
// with an error, never a panic; sqlite:PATH names PATH.
func FuzzSQLitePathFromURL(f *testing.F) {
	for _, s := range []string{"sqlite:ratchet.db", "sqlite://ratchet.db", "sqlite:///var/lib/ratchet.db", "sqlite:/abs.db",
		"sqlite:", "sqlite://", "sqlite:%zz", "sqlite:a?b#c", "postgres://x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := sqlite.PathFromURL(spec)
		if err == nil && p == "" {
			t.Fatalf("PathFromURL(%q) names an empty path", spec)
		}
		_, _ = Open, IsPostgres(spec) // the dispatch of Open reads spec too
	})
}

func TestRedactedMasksEveryCredential(t *testing.T) {
	for spec, want := range map[string]string{
		"postgres://ann:s3cret@db:5432/test":          "postgres://ann:xxxxx@db:5432/test",
		"postgres//ann:s3cret@db/test":                "***@db/test",
		"mysql://root:s3cret@tcp(db:3306)/x":          "mysql://***@tcp(db:3306)/x",
		"postgres://db/test?user=ann&password=s3cret": "postgres://db/test?password=xxxxx&user=ann",
		"sqlite:ratchet.db":                           "sqlite:ratchet.db",
		"postgres://ann@db/test":                      "postgres://ann@db/test",
	} {
		assert.Equal(t, want, Redacted(spec), spec)
	}
}
