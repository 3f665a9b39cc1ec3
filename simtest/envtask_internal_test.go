package simtest

import (
	"reflect"
	"strings"
	"testing"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

type argsMarker struct{}
type resultMarker struct{}

// The Env wraps every registered task; the wrapper must carry every option
// the engine reads of a definition, or a task behaves in an Env as it
// would not on a node (its circuit breaker was dropped so). Every method
// of ratchet.Task that names neither the task's arguments nor its result
// nor the task itself (Name, Execute and the options the engine reads by
// an interface) must be a method of envTask.
func TestEnvTaskCarriesEveryOptionOfATask(t *testing.T) {
	task := reflect.TypeFor[*ratchet.Task[argsMarker, resultMarker]]()
	wrapper := reflect.TypeFor[*envTask]()
	checked := 0
	for i := range task.NumMethod() {
		m := task.Method(i)
		if names(m.Type, "argsMarker", "resultMarker", "ratchet.Task[") {
			continue // the typed API users call, not what the engine dispatches
		}
		checked++
		w, ok := wrapper.MethodByName(m.Name)
		if !ok {
			t.Errorf("envTask lacks %s: the Env drops this option of a registered task", m.Name)
			continue
		}
		// Compare the signatures without the receivers.
		if got, want := w.Type.NumIn(), m.Type.NumIn(); got != want {
			t.Errorf("envTask.%s takes %d arguments, Task.%s %d", m.Name, got-1, m.Name, want-1)
		}
	}
	if checked < 4 {
		t.Fatalf("checked only %d methods of Task: Name, Execute, Protection and Validate at least", checked)
	}
}

// names reports whether a parameter or result of method type f (past its
// receiver) mentions one of the names.
func names(f reflect.Type, of ...string) bool {
	var types []reflect.Type
	for i := 1; i < f.NumIn(); i++ {
		types = append(types, f.In(i))
	}
	for i := range f.NumOut() {
		types = append(types, f.Out(i))
	}
	for _, t := range types {
		for _, n := range of {
			if strings.Contains(t.String(), n) {
				return true
			}
		}
	}
	return false
}
