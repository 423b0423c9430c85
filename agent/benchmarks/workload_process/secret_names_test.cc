#include "agent/benchmarks/workload_process/secret_names.h"

#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

TEST(LooksLikeSecretTest, NamesThatHoldSecrets) {
  for (const char* name : {"GITHUB_TOKEN",
                           "HF_TOKEN",
                           "hfToken",
                           "GHTOKEN",
                           "github_token",
                           "AWS_SECRET_ACCESS_KEY",
                           "AWS_ACCESS_KEY_ID",
                           "WANDB_API_KEY",
                           "apiKey",
                           "OPENAI_APIKEY",
                           "DB_PASSWORD",
                           "dbPassword",
                           "MYSQL_PWD",
                           "PGPASSWD",
                           "SMTP_PASS",
                           "GOOGLE_APPLICATION_CREDENTIALS",
                           "DOCKER_CREDS",
                           "BASIC_AUTH",
                           "HTTP_AUTHORIZATION",
                           "SESSION_COOKIE",
                           "KEY",
                           "SSH_KEY_PASSPHRASE",
                           "client-secret",
                           "ENCRYPTION.KEYS"}) {
    EXPECT_TRUE(LooksLikeSecret(name)) << name;
  }
}

TEST(LooksLikeSecretTest, NamesThatDoNot) {
  for (const char* name :
       {"PATH", "HOME", "PWD", "OLDPWD", "LANG", "CUDA_VISIBLE_DEVICES",
        "TOKENIZERS_PARALLELISM", "GIT_AUTHOR_NAME", "KEYBOARD_LAYOUT",
        "MONKEY", "NCCL_IB_PKEY", "PASSENGER_COUNT", "OMP_NUM_THREADS", "",
        "_"}) {
    EXPECT_FALSE(LooksLikeSecret(name)) << name;
  }
}

}  // namespace
}  // namespace fleetbench::agent
