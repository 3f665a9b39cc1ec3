package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemaFile is the documented schema of every --json output.
const schemaFile = "../../../docs/cli.schema.json"

// validateJSON checks out, a command's --json output, against the
// definition def of the documented schema.
func validateJSON(t *testing.T, def, out string) {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(schemaFile + "#/$defs/" + def)
	require.NoError(t, err)
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	require.NoError(t, err, "not JSON:\n%s", out)
	require.NoError(t, sch.Validate(v), "%s does not match $defs/%s:\n%s", def, def, out)
}

// Every --json output matches its definition in docs/cli.schema.json.
func TestJSONOutputsMatchTheSchema(t *testing.T) {
	db, failed, pending := opsStore(t)
	store := "sqlite:" + db
	for _, tc := range []struct {
		def  string
		args []string
	}{
		{"page", []string{"jobs", "list"}},
		{"page", []string{"dlq", "list", "--limit", "1"}},
		{"job_show", []string{"jobs", "show", failed[0].String()}},
		{"job_show", []string{"jobs", "show", pending[0].String()}}, // with why it waits
		{"bulk", []string{"jobs", "retry", "--status", "FAILED", "--dry-run"}},
		{"bulk", []string{"jobs", "cancel", pending[0].String(), failed[1].String()}},
		{"bulk", []string{"dlq", "retry", failed[2].String()}},
		{"stats", []string{"stats"}},
		{"nodes", []string{"nodes", "--within", "10000h"}},
		{"schedules", []string{"recurring", "list"}},
		{"trigger", []string{"recurring", "trigger", "nightly"}},
		{"archive", []string{"archive", "--older-than", "0s"}},
		{"version", []string{"version"}},
	} {
		args := append(append([]string{}, tc.args...), "--json")
		if tc.def != "version" {
			args = append(args, "--store", store)
		}
		code, out, errOut := cli(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		validateJSON(t, tc.def, out)
	}
	code, out, errOut := cli(t, "jobs", "show", pending[len(pending)-1].String(), "--json", "--store", store)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"waiting": {`, "a PENDING job says why it waits")
	code, out, errOut = cli(t, "jobs", "show", failed[0].String(), "--store", store)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, "waiting", "a finished job waits for nothing")
}

// The schema refuses what the outputs must not be: a planted bug in an
// output (a priority as a number, a null list) is caught.
func TestJSONSchemaCatchesAPlantedBug(t *testing.T) {
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(schemaFile + "#/$defs/stats")
	require.NoError(t, err)
	for _, bad := range []string{
		`{"counts":[{"status":"PENDING","task":"t","priority":2,"jobs":1}],"by_status":{},"estimated":false}`,
		`{"counts":null,"by_status":{},"estimated":false}`,
		`{"counts":[],"by_status":{"Pending":1},"estimated":false}`,
		`{"Counts":[],"by_status":{},"estimated":false}`,
	} {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(bad)))
		require.NoError(t, err)
		require.Error(t, sch.Validate(v), bad)
	}
}

// Each JSON example of docs/cli.md's "JSON output" matches one of the
// schema's definitions: the documentation shows what the commands write.
func TestDocumentedJSONExamplesMatchTheSchema(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/cli.md")
	require.NoError(t, err)
	section := string(doc)[strings.Index(string(doc), "## JSON output"):]
	defs := []string{"page", "job_show", "bulk", "stats", "nodes", "schedules", "trigger", "archive", "version",
		"submitted", "logs", "signal", "workflow", "batch", "cancelled"}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	var schemas []*jsonschema.Schema
	for _, d := range defs {
		sch, err := c.Compile(schemaFile + "#/$defs/" + d)
		require.NoError(t, err)
		schemas = append(schemas, sch)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(section, -1)
	require.GreaterOrEqual(t, len(blocks), 14)
	for _, b := range blocks {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(b[1]))
		require.NoError(t, err, b[1])
		ok := false
		for _, sch := range schemas {
			ok = ok || sch.Validate(v) == nil
		}
		require.True(t, ok, "no definition of the schema matches the example:\n%s", b[1])
	}
}
