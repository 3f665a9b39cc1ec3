package ferrettest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/ratchet-go/ratchet/internal/tcpproxy"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Wire protocol constants.
const (
	headerLen      = 16
	maxMessageLen  = 48 << 20
	opMsg          = 2013
	flagMoreToCome = 1 << 1
)

// proxy forwards MongoDB wire-protocol traffic to upstream, one request and
// its reply at a time per database across all client connections.
type proxy struct {
	p     *tcpproxy.Proxy
	locks *dbLocks // a database's lock is held from a request's forwarding to its reply; nil: no serialization
}

func startProxy(upstream string, locks *dbLocks) (*proxy, error) {
	x := &proxy{locks: locks}
	p, err := tcpproxy.Start(upstream, tcpproxy.Options{Serve: x.serve})
	if err != nil {
		return nil, fmt.Errorf("ferrettest: proxy: %w", err)
	}
	x.p = p
	return x, nil
}

func (p *proxy) addr() string { return p.p.Addr() }

// serve relays the requests of client c to upstream u until either ends.
func (p *proxy) serve(c, u net.Conn) {
	for {
		req, err := readMessage(c)
		if err != nil {
			return
		}
		replies, err := p.exchange(u, req)
		if err != nil {
			return
		}
		for _, r := range replies {
			if _, err := c.Write(r); err != nil {
				return
			}
		}
	}
}

// exchange sends one request and reads its replies, holding the lock of
// the request's database.
func (p *proxy) exchange(u net.Conn, req []byte) ([][]byte, error) {
	if p.locks != nil {
		l := p.locks.of(database(req))
		l.Lock()
		defer l.Unlock()
	}
	if _, err := u.Write(req); err != nil {
		return nil, err
	}
	if !wantsReply(req) {
		return nil, nil
	}
	var out [][]byte
	for {
		r, err := readMessage(u)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		if !moreToCome(r) {
			return out, nil
		}
	}
}

// dbLocks hands out one mutex per database name. Commands of different
// databases never touch the same documents, so they need not wait for each
// other; the conformance kit gives every case a database of its own, and
// its cases run in parallel.
type dbLocks struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func newDBLocks() *dbLocks { return &dbLocks{locks: map[string]*sync.Mutex{}} }

// of returns the mutex of database db.
func (d *dbLocks) of(db string) *sync.Mutex {
	d.mu.Lock()
	defer d.mu.Unlock()
	l, ok := d.locks[db]
	if !ok {
		l = &sync.Mutex{}
		d.locks[db] = l
	}
	return l
}

// database returns the "$db" of an OP_MSG request (the database its
// command runs in), or "" for another message or one without it: those
// share one lock.
func database(msg []byte) string {
	// header, flagBits, then sections; the body is the section of kind 0.
	const bodyKind = 0
	if len(msg) < headerLen+4 || binary.LittleEndian.Uint32(msg[12:16]) != opMsg {
		return ""
	}
	for rest := msg[headerLen+4:]; len(rest) > 5; {
		kind := rest[0]
		n := int(int32(binary.LittleEndian.Uint32(rest[1:5])))
		if n < 5 || 1+n > len(rest) {
			return ""
		}
		if kind == bodyKind {
			if v, err := bson.Raw(rest[1 : 1+n]).LookupErr("$db"); err == nil {
				if db, ok := v.StringValueOK(); ok {
					return db
				}
			}
			return ""
		}
		rest = rest[1+n:] // a document sequence: its size covers itself
	}
	return ""
}

// readMessage reads one length-prefixed wire-protocol message.
func readMessage(r io.Reader) ([]byte, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.LittleEndian.Uint32(h[:4])))
	if n < headerLen || n > maxMessageLen {
		return nil, errors.New("ferrettest: proxy: bad message length")
	}
	msg := make([]byte, n)
	copy(msg, h[:])
	if _, err := io.ReadFull(r, msg[headerLen:]); err != nil {
		return nil, err
	}
	return msg, nil
}

// moreToCome reports whether an OP_MSG has the moreToCome flag.
func moreToCome(msg []byte) bool {
	return len(msg) >= headerLen+4 &&
		binary.LittleEndian.Uint32(msg[12:16]) == opMsg &&
		binary.LittleEndian.Uint32(msg[16:20])&flagMoreToCome != 0
}

// wantsReply reports whether the server answers msg: every request but an
// OP_MSG with moreToCome (an unacknowledged write).
func wantsReply(msg []byte) bool { return !moreToCome(msg) }

// breakConns closes every connection the proxy relays; new connections
// are accepted as before.
func (p *proxy) breakConns() { p.p.Drop(false) }

// close stops accepting, closes every connection and waits.
func (p *proxy) close() { p.p.Close() }
