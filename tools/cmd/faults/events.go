package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// expectedEvents is what the menus and accounting services' outboxes must
// have delivered to the restaurant's feed for the run's successful writes:
// per event type and menu (or correction batch), how many events (exactly
// one per write).
func (l *load) expectedEvents() map[string]int {
	want := map[string]int{}
	for _, c := range l.chains {
		var types []string
		switch {
		case strings.HasPrefix(c.kind, "menu "):
			types = []string{"menu.created", "menu.updated", "menu.published"}
		case strings.HasPrefix(c.kind, "import "):
			types = []string{"", "menu.created", "menu.updated"} // the plan records nothing
		case strings.HasPrefix(c.kind, "correction "):
			// Previews record nothing; an apply and an undo one event
			// each, named by its batch.
			for i, typ := range []string{"", "payment_correction.applied", "", "payment_correction.undone"} {
				if i < len(c.writes) && typ != "" && c.writes[i].answer != nil {
					want[typ+" "+field("batchId")(c.writes[i].answer)]++
				}
			}
			continue
		default:
			continue
		}
		menuID := ""
		for i, w := range c.writes {
			if w.answer == nil {
				break
			}
			if types[i] == "" {
				continue
			}
			if menuID == "" {
				menuID = field("menu", "menuId")(w.answer)
			}
			want[types[i]+" "+menuID]++
		}
	}
	return want
}

// checkEvents reads the restaurant's whole feed (menu and payment
// correction events) and compares:
// every successful menu write's event present exactly once, none more (an
// outbox relay stopped while forwarding must neither lose nor duplicate).
// The relay forwards asynchronously: it waits up to 15 s for the feed to
// catch up.
func (l *load) checkEvents(ctx context.Context) []string {
	want := l.expectedEvents()
	var problems []string
	for deadline := time.Now().Add(15 * time.Second); ; {
		got, err := l.feedCounts(ctx)
		if err != nil {
			return []string{err.Error()}
		}
		problems = problems[:0]
		for k, n := range want {
			if got[k] != n {
				problems = append(problems, fmt.Sprintf("events feed: %d × %s, want %d", got[k], k, n))
			}
		}
		for k, n := range got {
			if _, ok := want[k]; !ok && n > 0 {
				problems = append(problems, fmt.Sprintf("events feed: %d × %s, for no successful write", n, k))
			}
		}
		if len(problems) == 0 || time.Now().After(deadline) {
			slices.Sort(problems)
			return problems
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

// feedCounts pages through the feed's menu and correction events of the
// run's menus and correction batches.
func (l *load) feedCounts(ctx context.Context) (map[string]int, error) {
	ours := map[string]bool{}
	for k := range l.expectedEvents() {
		_, id, _ := strings.Cut(k, " ")
		ours[id] = true
	}
	got := map[string]int{}
	for after := int64(0); ; {
		var page struct {
			Data struct {
				Events []struct {
					Type string `json:"type"`
					Data struct {
						Menu struct {
							MenuID string `json:"menuId"`
						} `json:"menu"`
						BatchID string `json:"batchId"`
					} `json:"data"`
				} `json:"events"`
				NextAfter int64 `json:"nextAfter"`
				HasMore   bool  `json:"hasMore"`
			} `json:"data"`
		}
		if !l.get(ctx, "events feed", l.path("/events?limit=200&types=menu.*,payment_correction.*&after="+strconv.FormatInt(after, 10)), &page) {
			return nil, fmt.Errorf("events feed after %d unreadable after the faults", after)
		}
		for _, e := range page.Data.Events {
			id := e.Data.Menu.MenuID
			if id == "" {
				id = e.Data.BatchID
			}
			if ours[id] {
				got[e.Type+" "+id]++
			}
		}
		if !page.Data.HasMore || page.Data.NextAfter <= after {
			return got, nil
		}
		after = page.Data.NextAfter
	}
}
