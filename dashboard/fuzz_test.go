package dashboard_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratchet-go/ratchet/dashboard"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// fuzzHandler is a dashboard over a memory store holding a few jobs, for
// the fuzz targets: they call it directly, with no server.
func fuzzHandler(f *testing.F) http.Handler {
	f.Helper()
	st := memory.New()
	c, err := ratchet.NewClient(st, ratchet.ClientOptions{MaskPayloads: true})
	if err != nil {
		f.Fatal(err)
	}
	for i := range 5 {
		if _, err := c.SubmitRaw(context.Background(), "email.send", []byte(`{"to":"ann@example.com"}`),
			ratchet.WithParam("n", string(rune('0'+i)))); err != nil {
			f.Fatal(err)
		}
	}
	h, err := dashboard.New(c, dashboard.Options{Prefix: prefix, Logger: slog.New(slog.DiscardHandler),
		Credentials: []dashboard.Credential{{Name: "alice", Token: opToken, Role: dashboard.RoleOperator}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = h.Close() })
	return h
}

// serve runs one request through h and returns its status; the query is
// set raw, whatever it holds.
func serve(h http.Handler, method, target, body string) int {
	path, query, _ := strings.Cut(target, "?")
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.URL.RawQuery = query
	req.Header.Set("Authorization", "Bearer "+opToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// FuzzListFilters: any query string of the jobs views (the list filters,
// the page cursor) is answered with a page or a 4xx naming the problem,
// never a 5xx or a panic.
func FuzzListFilters(f *testing.F) {
	for _, q := range []string{"status=FAILED&task=email.send", "priority=normal,HIGH&error=timeout",
		"created_from=2026-12-01&created_before=2026-12-06T10:00", "property=tenant%3Dacme", "after=not-a-uuid",
		"status=nope", "priority=9", "created_from=2026-13-40", "limit=-1", "archived=maybe", "%zz", ";;&&=="} {
		f.Add(q)
	}
	h := fuzzHandler(f)
	if code := serve(h, "GET", prefix+"/api/jobs?status=PENDING", ""); code != http.StatusOK {
		f.Fatalf("a valid listing: %d, want 200: the target would test nothing", code)
	}
	f.Fuzz(func(t *testing.T, query string) {
		for _, path := range []string{"/api/jobs?", "/jobs?", "/dlq?"} {
			if code := serve(h, "GET", prefix+path+query, ""); code >= 500 {
				t.Fatalf("GET %s%s: %d", path, query, code)
			}
		}
	})
}

// FuzzAPIRequestBody: any body of the JSON API's bulk action is answered
// with 202 or a 4xx naming the problem, never a 5xx or a panic.
func FuzzAPIRequestBody(f *testing.F) {
	for _, b := range []string{`{"action":"retry","filters":{"status":"FAILED","task":"nothing"}}`,
		`{"action":"cancel","filters":{"task":"email.send"},"bound":"01a24a71-472f-7000-a588-aa16e2db11fb"}`,
		`{"action":"delete","filters":{"status":"SUCCEEDED","created_before":"2026-12-01"}}`,
		`{"action":"explode","filters":{"status":"FAILED"}}`, `{"action":"retry"}`, `{"action":"retry","filters":{"priority":"9"}}`,
		`{"action":"retry","filters":{"status":"FAILED"},"bound":"x"}`, `[]`, `{`, ``, `null`, `{"filters":null}`} {
		f.Add(b)
	}
	h := fuzzHandler(f)
	if code := serve(h, "POST", prefix+"/api/jobs/bulk", `{"action":"retry","filters":{"status":"FAILED"}}`); code != http.StatusAccepted {
		f.Fatalf("a valid bulk action: %d, want 202: the target would test nothing", code)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if code := serve(h, "POST", prefix+"/api/jobs/bulk", body); code >= 500 {
			t.Fatalf("POST /api/jobs/bulk %q: %d", body, code)
		}
	})
}
