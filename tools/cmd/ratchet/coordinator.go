package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/ratchet-go/ratchet/coordination/ratchetnats"
	"github.com/ratchet-go/ratchet/coordination/ratchetredis"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// coordinatorOpener returns how to open a cluster coordinator on the
// server at url, on cluster, and names it: a Redis one for redis://,
// rediss:// and unix://, a NATS one for nats:// and tls://.
func coordinatorOpener(url, cluster string, logger *slog.Logger) (func(context.Context) (spi.ClusterCoordinator, error), string, error) {
	switch scheme, _, _ := strings.Cut(url, "://"); scheme {
	case "redis", "rediss", "unix":
		return func(ctx context.Context) (spi.ClusterCoordinator, error) {
			return ratchetredis.New(ctx, url, ratchetredis.Options{Cluster: cluster, Logger: logger})
		}, "Redis", nil
	case "nats", "tls":
		return func(ctx context.Context) (spi.ClusterCoordinator, error) {
			return ratchetnats.New(ctx, url, ratchetnats.Options{Cluster: cluster, Logger: logger})
		}, "NATS", nil
	default:
		return nil, "", fmt.Errorf("%q: want redis://host:port or nats://host:port", url)
	}
}

// wakeupPublisher is what the command needs of a coordinator: a wakeup
// published before the command exits (ratchetredis and ratchetnats).
type wakeupPublisher interface {
	PublishWakeup(ctx context.Context, w spi.WakeupHint) error
}

// cliSource names the command line as the source of its wakeups: no
// node's, so every node acts on them.
const cliSource = "ratchet-cli"

// cliNotifier tells the fleet of the command's writes through its
// coordinator, each at once (the command exits right after): new work
// (submissions, retries), and the cancels that took claims of RUNNING
// jobs away, so that their bodies stop at once rather than at their
// nodes' next heartbeat. It implements ratchet.ClaimsNotifier; a publish
// that fails is a warning, the write stands.
type cliNotifier struct {
	pub    wakeupPublisher
	stderr io.Writer
}

func (n cliNotifier) NotifyNewWork(p ratchet.Priority) {
	n.publish(context.Background(), spi.WakeupHint{Priority: p, Source: cliSource})
}

func (n cliNotifier) ClaimsChanged(ctx context.Context) {
	n.publish(ctx, spi.WakeupHint{Source: cliSource, CheckClaims: true})
}

func (n cliNotifier) publish(ctx context.Context, w spi.WakeupHint) {
	if err := n.pub.PublishWakeup(context.WithoutCancel(ctx), w); err != nil {
		fmt.Fprintf(n.stderr, "ratchet: warning: the fleet was not told through the coordinator (its nodes learn at their next poll or heartbeat): %v\n", err)
	}
}
