package password

import "testing"

func TestHashVerify(t *testing.T) {
	h, err := Hash("s3cret-password")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Verify(h, "s3cret-password"); !ok || err != nil {
		t.Fatalf("right password: %v %v", ok, err)
	}
	if ok, _ := Verify(h, "wrong"); ok {
		t.Fatal("wrong password accepted")
	}
	if h2, _ := Hash("s3cret-password"); h2 == h {
		t.Fatal("salt not random")
	}
	if _, err := Verify("$2a$10$bcrypt", "x"); err == nil {
		t.Fatal("foreign hash accepted")
	}
}
