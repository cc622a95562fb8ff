// Command pause is the local cluster's pod sandbox process (containerd's sandbox_image):
// it holds the pod's namespaces, reaps the children it inherits as the pod's init, and
// exits on SIGINT or SIGTERM. It stands in for registry.k8s.io/pause on a node with no
// registry.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
