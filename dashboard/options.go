package dashboard

import (
	"log/slog"
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
// request); one with a Password signs in as Name with HTTP basic
// authentication or the login form. Name is the actor the audit log
// records.
type Credential struct {
	Name     string
	Token    string
	Password string
	// Role is the credential's role; zero means RoleViewer.
	Role Role
}

// Options configure the dashboard. The zero value is refused by New:
// authentication is on by default, so give Credentials or set Insecure.
type Options struct {
	// Prefix is the path the dashboard is mounted at ("/ops" for
	// mux.Handle("/ops/", h)); empty means the root. Its links and its
	// cookie's path start with it.
	Prefix string
	// Credentials are the ways in (at least one unless Insecure).
	Credentials []Credential
	// Insecure serves without authentication, everyone an operator: for
	// a dashboard on a developer's loopback only.
	Insecure bool
	// SessionKey signs the session cookies and CSRF tokens (32 bytes or
	// more); nil means a random key, so that sessions end when the
	// process restarts and no two processes share them.
	SessionKey []byte
	// SessionTTL is how long a session lasts; zero means 12 hours.
	SessionTTL time.Duration
	// Breakers, when not nil, lists the circuit breakers of the node the
	// dashboard runs beside (engine.(*Engine).Breakers); without it the
	// breakers view says that no node is attached.
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
