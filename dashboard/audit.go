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
	e := spi.AuditEntry{Time: h.now(), Actor: clipBytes(actor, spi.MaxAuditActor), Action: clipBytes(action, spi.MaxAuditAction),
		Target: clipBytes(target, spi.MaxAuditTarget), Count: int64(max(count, 0)), Detail: clipBytes(detail, spi.MaxAuditDetail)}
	if _, err := al.AppendAudit(ctx, e); err != nil {
		err = fmt.Errorf("the audit log's append of %s on %s failed: %w", action, target, err)
		h.log.Error("dashboard: audit", "error", err)
		return err
	}
	return nil
}

// clipBytes cuts s to at most n bytes, on a rune boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !validEnd(s) {
		s = s[:len(s)-1]
	}
	return s
}

// validEnd reports whether s does not end inside a UTF-8 sequence.
func validEnd(s string) bool {
	for i := len(s) - 1; i >= 0 && i >= len(s)-4; i-- {
		b := s[i]
		if b < 0x80 {
			return true
		}
		if b >= 0xC0 { // a leading byte: is its sequence whole?
			need := 2
			switch {
			case b >= 0xF0:
				need = 4
			case b >= 0xE0:
				need = 3
			}
			return len(s)-i == need
		}
	}
	return false
}
