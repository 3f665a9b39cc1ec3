package dashboard

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// filterKeys are the job filters' query parameters, in the order their
// text (a bulk operation's target) lists them: the ratchet command's
// filters.
var filterKeys = []string{"status", "task", "tag", "priority", "error", "created_from", "created_before", "property", "due", "archived"}

// defaultPage is the jobs view's page size; maxPage the largest asked.
const (
	defaultPage = 50
	maxPage     = 1000
)

// filters are the job filters of a request.
type filters struct {
	Status        string
	Task          string
	Tag           string
	Priorities    []string // as given, one per checked box
	Error         string
	CreatedFrom   string
	CreatedBefore string
	Property      string
	Due           string // "now", "later" or empty (ratchet.JobFilter.Due)
	Archived      bool
}

// Has reports whether priority p is among the filter's.
func (f filters) Has(p string) bool {
	for _, q := range f.Priorities {
		if strings.EqualFold(q, p) {
			return true
		}
	}
	return false
}

// filtersOf reads the filters from a query (or a form).
func filtersOf(q url.Values) filters {
	f := filters{Status: strings.TrimSpace(q.Get("status")), Task: strings.TrimSpace(q.Get("task")), Tag: strings.TrimSpace(q.Get("tag")),
		Error: q.Get("error"), CreatedFrom: strings.TrimSpace(q.Get("created_from")),
		CreatedBefore: strings.TrimSpace(q.Get("created_before")), Property: strings.TrimSpace(q.Get("property")), Due: strings.TrimSpace(q.Get("due")),
		Archived: q.Get("archived") != "" && q.Get("archived") != "0" && q.Get("archived") != "false"}
	for _, v := range q["priority"] {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				f.Priorities = append(f.Priorities, p)
			}
		}
	}
	return f
}

// values returns the filters as a query.
func (f filters) values() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("status", f.Status)
	set("task", f.Task)
	set("tag", f.Tag)
	for _, p := range f.Priorities {
		q.Add("priority", p)
	}
	set("error", f.Error)
	set("created_from", f.CreatedFrom)
	set("created_before", f.CreatedBefore)
	set("property", f.Property)
	set("due", f.Due)
	if f.Archived {
		q.Set("archived", "1")
	}
	return q
}

// Query is the filters as a query string (url.Values encodes its keys in
// order: a stable text).
func (f filters) Query() string { return f.values().Encode() }

// text describes the filters for the audit log and the confirmation.
func (f filters) text() string {
	if q := f.Query(); q != "" {
		return q
	}
	return "(every job)"
}

// any reports whether a filter is set (a bulk action needs one).
func (f filters) any() bool {
	g := f
	g.Archived = false
	return g.Query() != ""
}

// listOptions returns the filters as the client's ListOptions, or an
// error naming the filter that does not parse (ratchet.JobFilter: the
// ratchet command's filters are the same).
func (f filters) listOptions() (ratchet.ListOptions, error) {
	return ratchet.JobFilter{Status: f.Status, Task: f.Task, Tag: f.Tag, Priorities: f.Priorities, ErrorContains: f.Error,
		CreatedFrom: f.CreatedFrom, CreatedBefore: f.CreatedBefore, Property: f.Property, Due: f.Due, Archived: f.Archived}.ListOptions()
}

// pageOf reads the keyset cursor and the page size.
func pageOf(q url.Values) (after uuid.UUID, limit int, err error) {
	if a := q.Get("after"); a != "" {
		if after, err = uuid.Parse(a); err != nil {
			return after, 0, fmt.Errorf("after %q: not a job id: %w", a, err)
		}
	}
	limit = defaultPage
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit <= 0 || limit > maxPage {
			return after, 0, fmt.Errorf("limit %q: want a number from 1 to %d", l, maxPage)
		}
	}
	return after, limit, nil
}

// statuses are the job states in the order the views list them.
var statuses = []spi.Status{spi.StatusPending, spi.StatusRunning, spi.StatusWaiting, spi.StatusBlocked,
	spi.StatusSucceeded, spi.StatusFailed, spi.StatusCancelled, spi.StatusSkipped}

// priorities are the priorities' names, lowest first.
var priorities = []string{"LOWEST", "LOW", "NORMAL", "HIGH", "CRITICAL"}
