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
// Credentials unless Insecure is set.
//
// Dependencies: the SDK only (and, in its tests, chromedp to drive a real
// headless Chromium).
package dashboard
