package ratchet_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

func TestJobFilterListOptions(t *testing.T) {
	o, err := ratchet.JobFilter{Status: " failed", Task: "email.send ", Tag: "vip", Priorities: []string{"normal,HIGH", "4", " "},
		ErrorContains: "Mailbox", CreatedFrom: "2026-12-01", CreatedBefore: "2026-12-02T10:30:00+01:00",
		Property: "tenant=acme=1", Archived: true}.ListOptions()
	require.NoError(t, err)
	assert.Equal(t, ratchet.ListOptions{Status: ratchet.StatusFailed, Task: "email.send", Tag: "vip",
		Priorities:    []ratchet.Priority{ratchet.PriorityNormal, ratchet.PriorityHigh, ratchet.PriorityCritical},
		ErrorContains: "Mailbox", CreatedFrom: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		CreatedBefore: time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC), PropertyKey: "tenant", PropertyValue: "acme=1",
		IncludeArchived: true}, o)

	o, err = ratchet.JobFilter{}.ListOptions()
	require.NoError(t, err)
	assert.Equal(t, ratchet.ListOptions{}, o, "the zero filter matches every live job")

	for f, want := range map[*ratchet.JobFilter]string{
		{Status: "LOST"}:                     `status "LOST": not a job state (PENDING,`,
		{Priorities: []string{"low,urgent"}}: `priority "urgent": not a priority (LOWEST, LOW, NORMAL, HIGH, CRITICAL)`,
		{CreatedFrom: "yesterday"}:           `created_from "yesterday": not a time`,
		{CreatedBefore: "12/01/2026"}:        `created_before "12/01/2026": not a time`,
		{Property: "novalue"}:                `property "novalue": want KEY=VALUE`,
		{Property: "=v"}:                     `property "=v": want KEY=VALUE`,
	} {
		_, err := f.ListOptions()
		require.Error(t, err, "%+v", *f)
		assert.ErrorContains(t, err, want)
		assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
		var fe *ratchet.FilterError
		assert.True(t, errors.As(err, &fe))
	}
}
