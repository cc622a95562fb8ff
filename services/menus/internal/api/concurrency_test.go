package api_test

import (
	"net/http"
	"sync"
	"testing"

	"partnerapi.dev/services/contracts"
)

// race sends the requests at once and returns their statuses.
func race(e *env, method string, paths []string, bodies []any) []int {
	statuses := make([]int, len(bodies))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range bodies {
		wg.Go(func() {
			<-start
			statuses[i], _ = e.do(method, paths[i%len(paths)], helsinki, bodies[i])
		})
	}
	close(start)
	wg.Wait()
	return statuses
}

func countOf(statuses []int, status int) int {
	n := 0
	for _, s := range statuses {
		if s == status {
			n++
		}
	}
	return n
}

// Two edits reviewed at the same version: exactly one wins, the other is a
// conflict, never a lost update.
func TestConcurrentEditsOfOneVersion(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	v := e.inspect(menuDraft, itemSpecial).Version
	statuses := race(e, http.MethodPatch, []string{itemPath(helsinki, menuDraft, itemSpecial)}, []any{
		patchBody(100, v, map[string]any{"name": "First"}), patchBody(101, v, map[string]any{"name": "Second"})})
	if countOf(statuses, http.StatusOK) != 1 || countOf(statuses, http.StatusConflict) != 1 {
		t.Fatalf("statuses %v", statuses)
	}
	if e.inspect(menuDraft, itemSpecial).Version == v {
		t.Fatal("version did not move")
	}
}

// Two set-POS calls expecting the same current menu: exactly one wins.
func TestConcurrentSetPos(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	statuses := race(e, http.MethodPut, []string{menus(helsinki) + "/pos"}, []any{
		setBody(110, menuDraft, 1, 1, "expectedCurrentPosMenuId", menuMain), setBody(111, menuLunch, 1, 1, "expectedCurrentPosMenuId", menuMain)})
	if countOf(statuses, http.StatusOK) != 1 || countOf(statuses, http.StatusConflict) != 1 {
		t.Fatalf("statuses %v", statuses)
	}
}

// Ten creates with one key at once: one menu, ten identical answers.
func TestConcurrentCreatesWithOneKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bodies := make([]any, 10)
	for i := range bodies {
		bodies[i] = newMenu{Name: "Once", IdempotencyKey: key(120)}
	}
	statuses := race(e, http.MethodPost, []string{menus(helsinki)}, bodies)
	if countOf(statuses, http.StatusCreated) != 10 {
		t.Fatalf("statuses %v", statuses)
	}
	if n := e.count("menus"); n != 1 {
		t.Fatalf("%d menus", n)
	}
}

// Two catalog batches planned on the same revision of a draft: exactly one
// writes.
func TestConcurrentCatalogBatches(t *testing.T) {
	t.Parallel()
	e := fixtureEnv(newEnv(t))
	e.Scopes = catalogScopes
	rev := e.target(helsinki, menuDraft).Revision
	menu := menuDraft
	b := func(id string) any {
		return contracts.CatalogBatch{BatchID: id, Document: document("ignored"),
			Target: contracts.CatalogBatchTarget{Mode: contracts.CatalogTargetExistingDraft, MenuID: &menu, ExpectedRevision: &rev}}
	}
	statuses := race(e, http.MethodPost, []string{batchPath(helsinki)}, []any{b("5d1e7c3a-0000-4000-8000-000000000201"), b("5d1e7c3a-0000-4000-8000-000000000202")})
	if countOf(statuses, http.StatusOK) != 1 || countOf(statuses, http.StatusConflict) != 1 {
		t.Fatalf("statuses %v", statuses)
	}
	if n := e.count("menu_items WHERE menu_id = '" + menuDraft + "'"); n != 3 {
		t.Fatalf("%d entries on the draft", n)
	}
}
