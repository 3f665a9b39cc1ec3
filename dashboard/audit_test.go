package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// brokenAudit is a memory store whose audit log refuses every append.
type brokenAudit struct{ *memory.Store }

func (b brokenAudit) Capabilities() spi.Capabilities {
	c := spi.CapabilitiesOf(b.Store)
	c.Audit = failingAudit{}
	return c
}

type failingAudit struct{}

func (failingAudit) AppendAudit(context.Context, spi.AuditEntry) (spi.AuditEntry, error) {
	return spi.AuditEntry{}, errors.New("audit table is read-only")
}
func (failingAudit) ListAudit(context.Context, int64, int) ([]spi.AuditEntry, error) { return nil, nil }
func (failingAudit) DeleteAudit(context.Context, time.Time, int) (int, error)        { return 0, nil }

func TestAuditFailureIsShown(t *testing.T) {
	st := memory.New()
	c, err := ratchet.NewClient(brokenAudit{st}, ratchet.ClientOptions{})
	require.NoError(t, err)
	e := newEnvOn(t, st, c)
	ids := e.failedJobs("send", 1)
	cl, csrf := e.login(opToken)
	code, _, hdr := e.do(cl, "POST", "/jobs/"+ids[0].String()+"/retry", url.Values{"csrf": {csrf}}, nil)
	require.Equal(t, http.StatusSeeOther, code)
	loc, err := url.Parse(hdr.Get("Location"))
	require.NoError(t, err)
	assert.Contains(t, loc.Query().Get("notice"), "audit table is read-only")
	code, body, _ := e.do(cl, "GET", loc.RequestURI()[len(prefix):], nil, nil)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "audit table is read-only")

	// A notice that the dashboard did not sign is not shown.
	_, body, _ = e.do(cl, "GET", "/jobs?notice=visit+evil.example", nil, nil)
	assert.NotContains(t, body, "evil.example")
}
