/* The real node's sandbox ("pause") process: PID 1 of every pod's sandbox. It holds the pod's
 * namespaces, reaps the zombies that land on it, and exits on SIGINT or SIGTERM. Built static by
 * scripts/cluster/realnode.sh into a one-file image, since no registry is reachable here. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) { _exit(128 + sig); }

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction term = {.sa_handler = stop};
  struct sigaction child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP | SA_RESTART};
  if (sigaction(SIGINT, &term, NULL) != 0 || sigaction(SIGTERM, &term, NULL) != 0 ||
      sigaction(SIGCHLD, &child, NULL) != 0) {
    return 1;
  }
  for (;;) {
    pause();
  }
}
