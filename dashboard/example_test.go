package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ratchet-go/ratchet/dashboard"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// Mount the dashboard under /ops in an application's own server, and
// read the overview through its JSON API with a bearer token.
func Example() {
	ctx := context.Background()
	client, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{MaskPayloads: true})
	if err != nil {
		panic(err)
	}
	for range 3 {
		if _, err := client.SubmitRaw(ctx, "send-email", []byte(`{"to":"a@example.com"}`)); err != nil {
			panic(err)
		}
	}

	h, err := dashboard.New(client, dashboard.Options{
		Prefix:      "/ops",
		Credentials: []dashboard.Credential{{Name: "alice", Token: "s3cret-token", Role: dashboard.RoleOperator}},
		Logger:      slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("/ops/", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/ops/api/overview", nil)
	req.Header.Set("Authorization", "Bearer s3cret-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var overview struct {
		Counts map[string]int64 `json:"counts"`
		ByTask []struct {
			Task string `json:"task"`
			Jobs int64  `json:"jobs"`
		} `json:"by_task"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&overview); err != nil {
		panic(err)
	}
	fmt.Println(resp.Status)
	fmt.Println("pending:", overview.Counts["PENDING"])
	fmt.Println("by task:", overview.ByTask[0].Task, overview.ByTask[0].Jobs)
	// Output:
	// 200 OK
	// pending: 3
	// by task: send-email 3
}

// Mount the dashboard behind the application's own sign-in: the
// Authenticate hook maps the application's session (here a cookie) to a
// user and a role, and refuses a request it does not accept.
func Example_authenticate() {
	client, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{MaskPayloads: true})
	if err != nil {
		panic(err)
	}
	sessions := map[string]dashboard.User{ // the application's sessions
		"s-1": {Name: "olga@example.com", Role: dashboard.RoleOperator},
		"s-2": {Name: "viv@example.com", Role: dashboard.RoleViewer},
	}
	h, err := dashboard.New(client, dashboard.Options{
		Prefix: "/ops",
		Authenticate: func(r *http.Request) (dashboard.User, error) {
			c, err := r.Cookie("app_session")
			if err != nil {
				return dashboard.User{}, errors.New("not signed in: sign in at /signin first")
			}
			u, ok := sessions[c.Value]
			if !ok {
				return dashboard.User{}, errors.New("your session has ended: sign in at /signin again")
			}
			return u, nil
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("/ops/", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	get := func(method, path, session string) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		if session != "" {
			req.AddCookie(&http.Cookie{Name: "app_session", Value: session})
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var out struct{ Error string }
		_ = json.Unmarshal(body, &out)
		fmt.Println(strings.TrimSpace(strings.Join([]string{method, path, session + ":", resp.Status, out.Error}, " ")))
	}
	get("GET", "/ops/api/overview", "s-2")
	get("POST", "/ops/api/jobs/bulk", "s-2")
	get("GET", "/ops/api/overview", "")
	// Output:
	// GET /ops/api/overview s-2: 200 OK
	// POST /ops/api/jobs/bulk s-2: 403 Forbidden forbidden: read-only: viv@example.com may not take actions
	// GET /ops/api/overview : 401 Unauthorized unauthorized: not signed in: sign in at /signin first
}
