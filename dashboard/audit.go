package dashboard

import (
	"context"
	"fmt"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// audit records an action: in the store's audit log when it keeps one,
// and in the logger. It returns the append's error (logged too) for the
// caller to show; nil when the store keeps no audit log.
func (h *Handler) audit(ctx context.Context, actor, action, target string, count int, detail string) error {
	h.log.Info("dashboard: action", "actor", actor, "action", action, "target", target, "count", count, "detail", detail)
	al := spi.CapabilitiesOf(h.c.Store()).Audit
	if al == nil {
		return nil
	}
	e := spi.AuditEntry{Time: h.now(), Actor: actor, Action: action, Target: target, Count: int64(max(count, 0)), Detail: detail}.Clipped()
	if _, err := al.AppendAudit(ctx, e); err != nil {
		err = fmt.Errorf("the audit log's append of %s on %s failed: %w", action, target, err)
		h.log.Error("dashboard: audit", "error", err)
		return err
	}
	return nil
}
