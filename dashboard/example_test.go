package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

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
