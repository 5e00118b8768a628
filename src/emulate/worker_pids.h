// The worker processes `shoal cluster up` starts, found again by their pid
// files: whether one is still ours, and stopping it.
#ifndef SHOAL_EMULATE_WORKER_PIDS_H_
#define SHOAL_EMULATE_WORKER_PIDS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace shoal {

bool Alive(pid_t pid);

// The command line of process `pid`, its arguments; empty when it is gone
// or unreadable.
std::vector<std::string> CommandLine(pid_t pid);

// Whether `pid` is the worker `cluster up` started for device `name`: a
// pidfile outlives its process, and the kernel hands its number to the
// next process that asks, which `cluster down` must not signal.
bool OurWorker(pid_t pid, const std::string& name);

// A command line as a message quotes it, cut to 80 characters.
std::string Quoted(const std::vector<std::string>& args);

// The pid in a pid file; 0 when there is none.
pid_t ReadPid(const std::string& path);

// SIGTERM, and SIGKILL when it is still there after 5 s; reaps it when it
// is this process's child.
void StopProcess(pid_t pid);

}  // namespace shoal

#endif  // SHOAL_EMULATE_WORKER_PIDS_H_
