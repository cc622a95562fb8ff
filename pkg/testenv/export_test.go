package testenv

import "path/filepath"

// BuiltOnce is Built's build under the checkout root, returning the error
// Built fails the test with.
func BuiltOnce(root, name string, build func(dir string) error) error {
	base := filepath.Join(root, builtRoot)
	return builtOnce(base, "stamp1", filepath.Join(base, "stamp1", name), build)
}
