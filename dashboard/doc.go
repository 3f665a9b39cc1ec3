// Package dashboard is Ratchet's web dashboard: an http.Handler that
// serves the operator's views of a cluster's store (overview charts, jobs
// with filters and bulk actions, job detail, the dead-letter queue, nodes,
// recurring schedules, workflows as graphs, circuit breakers, the audit
// log) and a small JSON API, over a ratchet.Client. Its assets are
// embedded: it works offline, with no CDN.
//
// Mount it in an application's own server, or run it with
// `ratchet dashboard --store ... --addr ...` (`ratchet dev` runs a node and
// the dashboard on an embedded SQLite store in one command).
//
// Contract (the parts of the module build on it):
//
//	h, err := dashboard.New(client, dashboard.Options{
//		Prefix:      "/ops",  // where it is mounted: mux.Handle("/ops/", h)
//		Credentials: []dashboard.Credential{{Name: "alice", Token: "s3cret", Role: dashboard.RoleOperator}},
//	})
//	defer h.Close()
//
// Authentication is on by default: New refuses Options with no
// Credentials unless an Authenticate hook or Insecure is set.
//
// # Signing in
//
// A browser signs in at {prefix}/login with a token, or a name and a
// password: the dashboard sets a session cookie (HttpOnly, SameSite=Lax,
// its path the prefix, Secure over TLS) signed with HMAC-SHA256 under
// Options.SessionKey, carrying the credential's name, role and expiry
// (Options.SessionTTL). POST {prefix}/logout ends it. Any request may
// instead carry "Authorization: Bearer <token>" or HTTP basic
// authentication (name and password). A request with no credential, or a
// wrong one, gets 401 and nothing is done: JSON for the API, the login
// form for a page.
//
// Options.Authenticate mounts the dashboard behind the application's own
// sign-in: the hook maps each request to a User (a name and a role), is
// asked before the Credentials, and refuses with an error (401, its text
// shown). Its users' actions pass http.CrossOriginProtection instead of
// carrying a CSRF token.
//
// Failed sign-ins (the form, basic authentication, bearer tokens,
// /login?token=) are throttled per client address (Options.ClientAddr)
// and per name: after 5 in a row, every attempt, even a right one, gets
// 429 Too Many Requests with Retry-After for a window of 1 s, doubled at
// each further failure up to 5 minutes; a success forgets them. Each
// failure, and the first refusal of each lockout, is written to the audit
// log (actions "signin.failed" and "signin.throttled", the name tried or
// "unknown" as the actor, the address as the target, the way as the
// detail; never the secret). A Credential's password may be stored as a
// bcrypt PasswordHash, compared in the same time whether the name exists
// or not.
//
// GET {prefix}/login?token=<token> signs in with that token and redirects
// to the overview: the clickable URL `ratchet dev` prints. It puts the
// token in the browser's history (and in any proxy's access log), so it is
// meant for a dashboard on the developer's loopback, not for one that
// others reach.
//
// Every state-changing request is a POST (another method gets 405). By a
// cookie session it must carry the session's CSRF token (an HMAC of the
// session's id) in the form field "csrf" or the header X-CSRF-Token, else
// 403; a request authenticated by its Authorization header needs none. A
// RoleViewer gets 403 on every action and sees no action buttons. Every
// action is appended to the store's audit log (spi.AuditLog, when the
// store keeps one) with the credential's name as its actor, and logged.
//
// # Routes
//
// Below the prefix (every link, form action, asset URL and the cookie's
// path start with it):
//
//	GET  /                        overview: counts by status, charts, the oldest due job's wait, jobs by task
//	GET  /jobs                    jobs: the ratchet command's filters, keyset pages (after=)
//	GET  /dlq                     the FAILED jobs
//	GET  /jobs/{id}               one job: fields, masked arguments and result, log, timeline, parents
//	POST /jobs/{id}/retry|cancel|delete
//	GET  /bulk/confirm            a bulk action's count and its snapshot bound (action=, filters)
//	POST /bulk                    start it in the background: redirects to /operations/{id}
//	GET  /operations/{id}         its progress and counts
//	GET  /nodes                   live nodes and the pending backlog per task
//	GET  /recurring               schedules; POST /recurring/pause|resume|trigger (form field id)
//	GET  /workflows/{id}          a workflow's graph
//	GET  /breakers                Options.Breakers
//	GET  /audit                   the audit log, newest first (before=)
//	GET  /api/overview            JSON: counts by status, by task, oldest due, samples
//	GET  /api/jobs                JSON: a page of jobs (filters, after=) and the next cursor
//	GET  /api/jobs/{id}           JSON: a job with its masked arguments and result
//	POST /api/jobs/{id}/retry|cancel|delete   JSON: the outcome
//	POST /api/jobs/bulk           JSON {"action", "filters": {...}, "bound"}: 202 and the operation's id
//	GET  /api/operations/{id}     JSON: an operation's state and counts
//
// Bulk operations live in the dashboard's memory (a restart forgets
// them); they run on the handler's context, not the request's, and Close
// cancels those still running. When the store fails, every view still
// renders its frame, with a banner "store unreachable: ..." and status
// 503.
//
// Dependencies: the SDK, and golang.org/x/crypto for bcrypt (the
// standard library has no password hash; x/crypto is the Go team's own
// module, and its bcrypt reads the hashes htpasswd -B makes). In its
// tests, the memory and SQLite stores. Its browser test, in a real headless Chromium driven by
// chromedp over a running node, is the ratchet command's
// (tools/cmd/ratchet/dashboard_browser_test.go).
package dashboard
