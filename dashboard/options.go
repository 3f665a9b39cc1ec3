package dashboard

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/ratchet-go/ratchet/sdk/breaker"
)

// Role is what a signed-in user may do.
type Role int

const (
	// RoleViewer sees every view and acts on nothing: an action answers
	// 403 Forbidden.
	RoleViewer Role = iota + 1
	// RoleOperator sees every view and takes the actions (retry, cancel,
	// delete, bulk actions, pause, resume and trigger schedules).
	RoleOperator
)

// Credential is one way in. A credential with a Token signs in with that
// token (the login form, or an "Authorization: Bearer" header on any
// request); one with a Password or a PasswordHash signs in as Name with
// HTTP basic authentication or the login form. Name is the actor the audit
// log records.
type Credential struct {
	Name     string
	Token    string
	Password string
	// PasswordHash is the password's bcrypt hash ("$2a$...", "$2b$..." or
	// "$2y$...", as bcrypt.GenerateFromPassword or htpasswd -B make it),
	// instead of Password: the password itself is then stored nowhere.
	// New refuses a malformed hash, and a credential with both.
	PasswordHash string
	// Role is the credential's role; zero means RoleViewer.
	Role Role
}

// User is who an application's Options.Authenticate hook says makes a
// request. The zero User (with a nil error) means that the hook does not
// know the request: the dashboard's own Credentials are tried.
type User struct {
	// Name is the actor the audit log records and the pages show.
	Name string
	// Role is what the user may do; zero means RoleViewer.
	Role Role
}

// Options configure the dashboard. The zero value is refused by New:
// authentication is on by default, so give Credentials or an
// Authenticate hook, or set Insecure.
type Options struct {
	// Prefix is the path the dashboard is mounted at ("/ops" for
	// mux.Handle("/ops/", h)); empty means the root. Its links and its
	// cookie's path start with it.
	Prefix string
	// Credentials are the dashboard's own ways in (at least one unless
	// Authenticate or Insecure is set).
	Credentials []Credential
	// Authenticate, when not nil, mounts the dashboard behind the
	// application's own sign-in: it maps each request (the application's
	// session cookie, header, client certificate...) to a User, and is
	// asked first, before the Credentials. A User with a Name is that
	// user, with its role; the zero User and a nil error fall through to
	// the Credentials (and, with none, 401); an error refuses the request
	// with 401 and the error's text as the message (say where to sign
	// in). Its users' actions are guarded against cross-site requests by
	// http.CrossOriginProtection rather than a CSRF token, and their
	// sign-ins are the application's to throttle.
	Authenticate func(r *http.Request) (User, error)
	// ClientAddr, when not nil, is the client address of a request that
	// failed sign-ins are throttled by (for a dashboard behind a proxy:
	// the address the proxy forwards, from a header only the proxy sets);
	// nil or an empty result means the host of r.RemoteAddr.
	ClientAddr func(r *http.Request) string
	// Insecure serves without authentication, everyone an operator: for
	// a dashboard on a developer's loopback only. New refuses it with
	// Authenticate.
	Insecure bool
	// SessionKey signs the session cookies and CSRF tokens (32 bytes or
	// more); nil means a random key, so that sessions end when the
	// process restarts and no two processes share them.
	SessionKey []byte
	// SessionTTL is how long a session lasts; zero means 12 hours.
	SessionTTL time.Duration
	// Breakers, when not nil, lists the circuit breakers of the node the
	// dashboard runs beside (engine.(*Engine).Breakers), read live;
	// without it the breakers view shows only the breakers the live nodes
	// report with their heartbeats.
	Breakers func() []breaker.Status
	// SampleEvery is how often the overview's charts sample the store's
	// job counts; zero means 10 seconds.
	SampleEvery time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger logs failed store calls and actions; nil means slog.Default().
	Logger *slog.Logger
	// LiveWithin is how old a node's heartbeat may be for the nodes view
	// to count it live (use the fleet's orphan grace); zero means
	// DefaultLiveWithin.
	LiveWithin time.Duration
}

// DefaultLiveWithin is Options.LiveWithin's default: the engine's default
// orphan grace.
const DefaultLiveWithin = 60 * time.Second
