package mysql

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ratchet-go/ratchet/stores/mysql/internal/gosqldriver"
)

// withHosts reads an address list in cfg (host:port,host:port, as a
// mysql:// URL or a tcp(...) address may carry) and, when it names more
// than one server, makes the connections dial them in turn: a new
// connection goes to the server the last one reached, and to the next
// server that answers when that one does not. Every fleet node on one
// DSN thus writes through one server of a multi-primary cluster (a Galera
// cluster) at a time, and moves to the next one when it is lost.
func withHosts(cfg *gosqldriver.Config) error {
	if cfg.Net != "tcp" || !strings.Contains(cfg.Addr, ",") {
		return nil
	}
	var addrs []string
	for _, a := range strings.Split(cfg.Addr, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			return fmt.Errorf("the address list %q has an empty entry", cfg.Addr)
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			a = net.JoinHostPort(a, "3306")
		}
		addrs = append(addrs, a)
	}
	h := &hosts{addrs: addrs}
	cfg.Addr = strings.Join(addrs, ",")
	cfg.DialFunc = h.dial
	return nil
}

// nativeList finds an address list in a driver DSN: user@tcp(h1:p,h2:p)/db.
var nativeList = regexp.MustCompile(`@tcp\(([^()]*,[^()]*)\)`)

// addressList is the list of addresses of a DSN that names several
// servers, as written; "" when it names one.
func addressList(dsn string) string {
	if rest, ok := strings.CutPrefix(dsn, "mysql://"); ok {
		authority, _, _ := strings.Cut(rest, "/")
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			authority = authority[at+1:]
		}
		if strings.Contains(authority, ",") {
			return authority
		}
		return ""
	}
	if m := nativeList.FindStringSubmatch(dsn); m != nil {
		return m[1]
	}
	return ""
}

// hosts dials the servers of an address list, starting with the one the
// last connection reached.
type hosts struct {
	addrs   []string
	current atomic.Int32 // the index of the server last reached
}

// dial connects to the first server that answers, from the current one
// on, giving each an equal share of what is left of ctx's time (the
// connect timeout); the address the driver passes (the whole list) is
// ignored.
func (h *hosts) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	from := int(h.current.Load())
	var errs []error
	for k := range h.addrs {
		i := (from + k) % len(h.addrs)
		dctx, cancel := ctx, context.CancelFunc(func() {})
		if deadline, ok := ctx.Deadline(); ok {
			dctx, cancel = context.WithTimeout(ctx, time.Until(deadline)/time.Duration(len(h.addrs)-k))
		}
		var d net.Dialer
		conn, err := d.DialContext(dctx, network, h.addrs[i])
		cancel()
		if err == nil {
			h.current.Store(int32(i))
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetKeepAlive(true)
			}
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("no server of %s answered: %w", strings.Join(h.addrs, ","), errors.Join(errs...))
}
