package tools_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// nodeProcess starts this test binary again as one node process on
// PostgreSQL: it runs only the test child, which finds the DSN, the
// schema and the node's name in the environment variable env (see
// serveNode). The caller kills it.
func nodeProcess(t *testing.T, child, env, dsn, schema, node string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$")
	cmd.Env = append(os.Environ(), env+"="+strings.Join([]string{dsn, schema, node}, "\x1f"))
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	return cmd
}

// nodeProcesses starts n node processes named node-0 .. node-n-1 and
// kills them when the test ends (or when the caller's stop runs first).
func nodeProcesses(t *testing.T, n int, child, env, dsn, schema string) (stop func()) {
	t.Helper()
	var cmds []*exec.Cmd
	for i := range n {
		cmds = append(cmds, nodeProcess(t, child, env, dsn, schema, fmt.Sprint("node-", i)))
	}
	stop = func() {
		for _, cmd := range cmds {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		cmds = nil
	}
	t.Cleanup(stop)
	return stop
}

// serveNode is the body of a node process (nodeProcess): when env is set,
// it opens the store it names and runs an engine of opts (NodeID and the
// logger filled in) with tasks until the parent kills the process; it
// skips the test otherwise, naming the test it is a part of.
func serveNode(t *testing.T, env, of string, opts engine.Options, tasks ...ratchet.Definition) {
	v := os.Getenv(env)
	if v == "" {
		t.Skip("a node process of " + of)
	}
	f := strings.Split(v, "\x1f")
	s, err := postgres.Open(t.Context(), f[0], postgres.Options{Schema: f[1]})
	require.NoError(t, err)
	defer s.Close()
	opts.NodeID, opts.Client.Logger = f[2], quiet
	eng, err := engine.New(s, opts, tasks...)
	require.NoError(t, err)
	require.NoError(t, eng.Start(t.Context()))
	<-t.Context().Done() // until the parent kills the process
}
