// agent/benchmarks/workload_process/secret_names.h — which environment
// variable names look like they hold a secret, so that whoever shows a
// workload's environment (logs, results, the CLI) prints "<redacted>"
// instead of the value.
//
// A name is cut into words at every character that is not a letter or a
// digit and where a lower-case letter is followed by an upper-case one
// ("hfToken" -> hf, Token). It looks like a secret when, ignoring case:
//   - it contains PASSWORD, PASSWD, PASSPHRASE, SECRET, CREDENTIAL or
//     APIKEY anywhere (long enough that no innocent name holds them);
//   - a word is TOKEN, KEY, AUTH, PASS, CREDS, COOKIE, AUTHORIZATION or
//     their plurals, or ends in TOKEN ("GHTOKEN");
//   - a word is PWD and the name has other words (MYSQL_PWD; PWD alone is
//     the working directory).
// Short words count only whole, so TOKENIZERS_PARALLELISM, GIT_AUTHOR_NAME,
// KEYBOARD and MONKEY do not look like secrets. It errs towards hiding: a
// harmless value hidden costs less than a secret shown.
//
// Pure; thread-safe.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_SECRET_NAMES_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_SECRET_NAMES_H_

#include <string_view>

namespace fleetbench::agent {

bool LooksLikeSecret(std::string_view env_name);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_PROCESS_SECRET_NAMES_H_
