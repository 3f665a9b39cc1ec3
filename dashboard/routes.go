package dashboard

import (
	"io/fs"
	"net/http"
)

// routes builds the mux of the paths below the prefix.
func (h *Handler) routes() {
	m := http.NewServeMux()
	assets, _ := fs.Sub(assetFS, "assets")
	m.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	m.HandleFunc("GET /login", h.login)
	m.HandleFunc("POST /login", h.loginPost)

	a := http.NewServeMux() // the authenticated routes
	page := func(pattern string, fn http.HandlerFunc) { a.HandleFunc("GET "+pattern, fn) }
	act := func(pattern string, fn func(w http.ResponseWriter, r *http.Request, p *principal)) {
		a.HandleFunc("POST "+pattern, h.action(fn))
		a.HandleFunc(pattern, h.methodNotAllowed)
	}
	page("/{$}", h.overview)
	page("/jobs", h.jobs)
	page("/dlq", h.dlq)
	page("/jobs/{id}", h.job)
	page("/bulk/confirm", h.bulkConfirm)
	page("/operations/{id}", h.operation)
	page("/nodes", h.nodes)
	page("/recurring", h.recurring)
	page("/workflows", h.workflows)
	page("/workflows/{id}", h.workflow)
	page("/batches", h.batches)
	page("/batches/{id}", h.batch)
	page("/breakers", h.breakers)
	page("/audit", h.auditView)
	for verb := range jobActions {
		act("/jobs/{id}/"+verb, h.jobAction(verb))
		act("/api/jobs/{id}/"+verb, h.apiJobAction(verb))
	}
	act("/bulk", h.bulkPost)
	act("/bulk/selected", h.selectedPost)
	act("/batches/{id}/cancel", h.batchCancel)
	act("/recurring/pause", h.schedulePause)
	act("/recurring/resume", h.scheduleResume)
	act("/recurring/trigger", h.scheduleTrigger)
	act("/tasks/pause", h.taskPause)
	act("/tasks/resume", h.taskResume)
	a.HandleFunc("POST /logout", h.logout)
	a.HandleFunc("/logout", h.methodNotAllowed)

	a.HandleFunc("GET /api/overview", h.apiOverview)
	a.HandleFunc("GET /api/jobs", h.apiJobs)
	a.HandleFunc("GET /api/jobs/{id}", h.apiJob)
	a.HandleFunc("POST /api/jobs/bulk", h.action(h.apiBulk))
	a.HandleFunc("GET /api/operations/{id}", h.apiOperation)
	a.HandleFunc("GET /api/workflows", h.apiWorkflows)
	a.HandleFunc("GET /api/batches", h.apiBatches)
	a.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such API route: " + r.Method + " " + r.URL.Path})
	})
	a.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.errorPage(w, r, http.StatusNotFound, "no such page: "+r.URL.Path)
	})
	m.Handle("/", h.guard(a))
	h.mux = m
}
