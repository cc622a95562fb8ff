package mdtable

import (
	"reflect"
	"testing"
)

const doc = "# Title\n\n| a | b |\n|---|---|\n| x | y |\n\n## Ports\n\nText.\n\n| process | port |\n|---|---|\n| `gateway` | 8080 |\n| `a\\|b` | `x|y` |\n\n```\n| not | a table |\n|---|---|\n```\n\n### Deeper\n\n| c |\n|---|\n| z |\n\n## Next\n\n| other |\n|---|\n| w |\n"

func TestUnder(t *testing.T) {
	got := Under(doc, "Ports")
	want := []Table{
		{Header: []string{"process", "port"}, Rows: [][]string{{"`gateway`", "8080"}, {"`a|b`", "`x|y`"}}},
		{Header: []string{"c"}, Rows: [][]string{{"z"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Under(Ports) = %#v, want %#v", got, want)
	}
	if got := Under(doc, "Missing"); got != nil {
		t.Fatalf("Under(Missing) = %#v, want none", got)
	}
	if c := got[0].Column("port"); c != 1 {
		t.Fatalf("Column(port) = %d", c)
	}
}

func TestCode(t *testing.T) {
	if got := Code("`restaurant.read`, `menu.read` (and `x`)"); !reflect.DeepEqual(got, []string{"restaurant.read", "menu.read", "x"}) {
		t.Fatalf("Code = %v", got)
	}
}
