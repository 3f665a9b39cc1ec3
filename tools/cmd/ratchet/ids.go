package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// Short job ids: a table on a terminal shows each job by the shortest
// prefix of its id that no other row of the page shares (at least
// minShortID characters), and every command that takes a job id takes
// such a prefix back, resolved by a listing from where the prefix starts
// (job ids are ordered, so the jobs it may name are consecutive): an
// unknown or ambiguous prefix is an error naming the jobs it matches.

// minShortID is the shortest prefix shown: 13 characters hold the id's
// millisecond timestamp (UUIDv7).
const minShortID = 13

// shortIDs returns the prefix length that tells ids apart (at least
// minShortID; the whole id when that is what it takes).
func shortIDs(ids []uuid.UUID) int {
	for n := minShortID; n < 36; n++ {
		seen := make(map[string]bool, len(ids))
		unique := true
		for _, id := range ids {
			p := id.String()[:n]
			if seen[p] {
				unique = false
				break
			}
			seen[p] = true
		}
		if unique {
			return n
		}
	}
	return 36
}

// jobID reads a job id, whole or a prefix of at least 8 characters
// (ratchet jobs list's short ids), resolved in c's store.
func jobID(ctx context.Context, c *ratchet.Client, s string) (uuid.UUID, error) {
	if id, err := uuid.Parse(s); err == nil {
		return id, nil
	}
	p := strings.ToLower(s)
	if len(p) < 8 || len(p) > 36 || strings.Trim(p, "0123456789abcdef-") != "" {
		return uuid.Nil, usageError(fmt.Sprintf("job id %q: want a job id, or a prefix of one of at least 8 characters", s))
	}
	const zero = "00000000-0000-0000-0000-000000000000"
	low, err := uuid.Parse(p + zero[len(p):])
	if err != nil {
		return uuid.Nil, usageError(fmt.Sprintf("job id %q: not the start of a job id", s))
	}
	after := low
	for i := len(after) - 1; i >= 0; i-- { // the id just before low: the listing starts at low
		after[i]--
		if after[i] != 0xff {
			break
		}
	}
	if low == uuid.Nil {
		after = uuid.Nil
	}
	page, err := c.ListJobs(ctx, ratchet.ListOptions{After: after, Limit: 2, IncludeArchived: true})
	if err != nil {
		return uuid.Nil, err
	}
	var found []uuid.UUID
	for _, j := range page.Jobs {
		if strings.HasPrefix(j.ID.String(), p) {
			found = append(found, j.ID)
		}
	}
	switch len(found) {
	case 0:
		return uuid.Nil, fmt.Errorf("job %s not found", s)
	case 1:
		return found[0], nil
	}
	return uuid.Nil, usageError(fmt.Sprintf("job id %q is ambiguous: %s, %s, ...; give more of it", s, found[0], found[1]))
}
