package ratchetnats

import (
	"context"
	"log/slog"
	"testing"

	"github.com/ratchet-go/ratchet/coordination/internal/hub"
	"github.com/ratchet-go/ratchet/coordination/internal/hub/hubtest"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// testAddr is the local NATS server (CI runs one too).
const testAddr = "127.0.0.1:4222"

func TestCoordinator(t *testing.T) {
	hubtest.Run(t, hubtest.Harness{Name: "NATS", Addr: testAddr,
		New: func(ctx context.Context, addr, cluster string, log *slog.Logger) (spi.ClusterCoordinator, *hub.Hub, error) {
			c, err := New(ctx, "nats://"+addr, Options{Cluster: cluster, Logger: log})
			if err != nil {
				return nil, nil, err
			}
			return c, c.hub, nil
		}})
}
