// Where prepare_data's data comes from (tokenizer/data_files.h): SHA-256 against known
// digests, the pinned checksums against the offline data, the lookup order ($WB_DATA,
// the build's data cache, an earlier download), and the download itself against an
// HTTP server on the loopback address (python3's http.server; these tests skip with the
// reason where python3 is missing): a good file is downloaded, verified and used; a file
// with another checksum, a file the server does not have and a server that refuses the
// connection each fail with exit 2, a message that names the file, and nothing left on
// disk.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/tiny_vocabulary.h"
#include "tests/tokenizer/test_common.h"
#include "tokenizer/data_files.h"
#include "tokenizer/dataset.h"
#include "base/sha256.h"
#include "tokenizer/token_file.h"

extern char** environ;

namespace wb::tokenizer::test {
namespace {

// prepare_data's environment in these tests: no $WB_DATA of the person running them,
// and no proxy between curl and the loopback server.
const std::string kCleanEnv =
    "env -u WB_DATA -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY -u all_proxy -u ALL_PROXY";

// python3 on the PATH, or nothing.
std::optional<fs::path> find_python3() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / "python3";
    if (!candidate.parent_path().empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

#define WB_REQUIRE_PYTHON3()                                                                                       \
  do {                                                                                                             \
    if (!find_python3()) GTEST_SKIP() << "needs python3 on the PATH: the loopback HTTP server is its http.server"; \
  } while (0)

// python3's http.server over a folder, on 127.0.0.1 at a port the kernel chose (so that
// two runs never collide), printed on its first line; stopped with the object.
class loopback_server {
 public:
  explicit loopback_server(const fs::path& root) {
    const std::string script =
        "import functools, http.server, sys\n"
        "handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])\n"
        "server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)\n"
        "print(server.server_address[1], flush=True)\n"
        "server.serve_forever()\n";
    const std::string python = find_python3().value().string(), log = (log_dir_ / "server.log").string();
    std::vector<std::string> args = {python, "-c", script, root.string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int spawned = posix_spawn(&pid_, python.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (spawned != 0) {
      ::close(fds[0]);
      throw std::runtime_error("cannot run " + python);
    }
    std::string port;
    char c = 0;
    while (::read(fds[0], &c, 1) == 1 && c != '\n') port += c;
    ::close(fds[0]);
    if (port.empty()) {
      stop();
      throw std::runtime_error("the loopback server did not start: " + read_bytes(log));
    }
    url_ = "http://127.0.0.1:" + port;
  }
  ~loopback_server() { stop(); }
  loopback_server(const loopback_server&) = delete;
  loopback_server& operator=(const loopback_server&) = delete;

  const std::string& url() const { return url_; }

 private:
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  temp_dir log_dir_;
  pid_t pid_ = -1;
  std::string url_;
};

// A loopback port where a connection is refused: bound by this socket, so that nothing
// else takes it during the test, and never listened on.
class refused_port {
 public:
  refused_port() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), size) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &size) != 0) {
      throw std::runtime_error("cannot bind a loopback port");
    }
    port_ = ntohs(a.sin_port);
  }
  ~refused_port() { ::close(fd_); }
  refused_port(const refused_port&) = delete;
  refused_port& operator=(const refused_port&) = delete;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Every regular file under dir, recursively (what a failed run must not leave).
std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> files;
  if (!fs::exists(dir)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path().string());
  }
  return files;
}

// The fixtures a server (or $WB_DATA) holds, laid out as a data folder, with the
// options that make prepare_data download them and expect their checksums.
struct fixture {
  testing::TinyVocabulary vocab = testing::tiny_vocabulary();
  std::string text;
  fixture() {
    // 9,000 sections of "hi\n\n" (end of text, hi, \n, \n) and a last "hi": 36,002
    // tokens, of which 32,768 validation.
    for (int k = 0; k < 9000; ++k) text += "hi\n\n";
    text += "hi";
  }
  void write(const fs::path& root, const std::string& text_name = "tinyshakespeare.txt") const {
    testing::write_tiny_vocabulary(root / "gpt2");
    write_bytes(root / text_name, text);
  }
  std::string sha256_args() const {
    return "--sha256 tinyshakespeare.txt=" + sha256_hex(text) +
           " --sha256 encoder.json=" + sha256_hex(vocab.encoder_json) +
           " --sha256 vocab.bpe=" + sha256_hex(vocab.vocab_bpe);
  }
  std::string url_args(const std::string& server) const {
    return "--url " + server + "/input.txt --vocab-url " + server + "/gpt2";
  }
  token_split tokens() const {
    bpe_tokenizer t = bpe_tokenizer::parse(vocab.encoder_json, vocab.vocab_bpe);
    return tinyshakespeare_tokens(text, t);
  }
};

// The fixture on a loopback server, as the sources a download takes: input.txt and gpt2/
// in `served`.
loopback_server serve(const fixture& fx, const temp_dir& served) {
  fx.write(served.path(), "input.txt");
  return loopback_server(served.path());
}

TEST(DataFiles, PinnedSourcesAndChecksumsAreThoseOfTheOfflineData) {
  EXPECT_EQ(tinyshakespeare_file().url,
            "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt");
  EXPECT_EQ(encoder_json_file().url, "https://openaipublic.blob.core.windows.net/gpt-2/models/124M/encoder.json");
  EXPECT_EQ(vocab_bpe_file().url, "https://openaipublic.blob.core.windows.net/gpt-2/models/124M/vocab.bpe");
  WB_REQUIRE_DATA();
  for (const data_file& f : pinned_files()) {
    EXPECT_EQ(sha256_hex(read_bytes(data_dir() / f.relative)), f.sha256) << f.relative;
  }
}

TEST(Download, TheFilesAreDownloadedVerifiedAndUsed) {
  WB_REQUIRE_PYTHON3();
  const temp_dir served, out;
  const fixture fx;
  const loopback_server server = serve(fx, served);
  const std::string args =
      "tinyshakespeare --out " + q(out.path()) + " " + fx.url_args(server.url()) + " " + fx.sha256_args();
  run_result r = prepare_data(args, kCleanEnv);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (const std::string name : {"encoder.json", "vocab.bpe"}) {
    EXPECT_NE(r.out.find("downloading " + server.url() + "/gpt2/" + name), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(name + ": " + (out / "gpt2" / name).string() + " (downloaded, sha256 verified)"),
              std::string::npos)
        << r.out;
  }
  EXPECT_NE(
      r.out.find("tinyshakespeare.txt: " + (out / "tinyshakespeare.txt").string() + " (downloaded, sha256 verified)"),
      std::string::npos)
      << r.out;
  // Laid out as a data folder, so that WB_DATA=OUT serves another run.
  EXPECT_EQ(read_bytes(out / "tinyshakespeare.txt"), fx.text);
  EXPECT_EQ(read_bytes(out / "gpt2" / "encoder.json"), fx.vocab.encoder_json);
  EXPECT_EQ(read_bytes(out / "gpt2" / "vocab.bpe"), fx.vocab.vocab_bpe);
  // Used: the token files are the fixture text in the fixture vocabulary.
  const token_split expected = fx.tokens();
  EXPECT_EQ(read_token_file(out / "tiny_shakespeare_val.bin"), expected.val);
  EXPECT_EQ(read_token_file(out / "tiny_shakespeare_train.bin"), expected.train);
  EXPECT_NE(r.out.find("gpt2_tokenizer.bin: 258 tokens, end of text 257"), std::string::npos) << r.out;
  for (const std::string& f : files_under(out.path())) EXPECT_EQ(f.find(".part-"), std::string::npos) << f;

  // A second run finds the downloads, checks them again and downloads nothing.
  r = prepare_data(args, kCleanEnv);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("downloading"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(downloaded before, sha256 verified)"), std::string::npos) << r.out;
}

TEST(Download, AFileWithAnotherChecksumFailsAndIsNotKept) {
  WB_REQUIRE_PYTHON3();
  const temp_dir served, out;
  const fixture fx;
  const loopback_server server = serve(fx, served);
  // The fixture vocabulary against the pinned checksum of GPT-2's.
  const run_result r =
      prepare_data("tokenizer --out " + q(out.path()) + " --vocab-url " + server.url() + "/gpt2", kCleanEnv);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("encoder.json downloaded from " + server.url() +
                       "/gpt2/encoder.json does not have the "
                       "expected SHA-256: expected " +
                       encoder_json_file().sha256 + ", got " + sha256_hex(fx.vocab.encoder_json)),
            std::string::npos)
      << r.err;
  EXPECT_EQ(files_under(out.path()), std::vector<std::string>{});

  // The text with a checksum given for it that it does not have; the vocabulary is good.
  const std::string wrong(64, '0');
  const run_result t = prepare_data("tinyshakespeare --out " + q(out.path()) + " " + fx.url_args(server.url()) + " " +
                                        fx.sha256_args() + " --sha256 tinyshakespeare.txt=" + wrong,
                                    kCleanEnv);
  EXPECT_EQ(t.code, 2) << t.out << t.err;
  EXPECT_NE(t.err.find("tinyshakespeare.txt downloaded from " + server.url() +
                       "/input.txt does not have the "
                       "expected SHA-256: expected " +
                       wrong + ", got " + sha256_hex(fx.text)),
            std::string::npos)
      << t.err;
  EXPECT_NE(t.err.find("the download was removed"), std::string::npos) << t.err;
  EXPECT_FALSE(fs::exists(out / "tinyshakespeare.txt"));
  EXPECT_FALSE(fs::exists(out / "tiny_shakespeare_val.bin"));
  for (const std::string& f : files_under(out.path())) EXPECT_EQ(f.find(".part-"), std::string::npos) << f;
}

TEST(Download, AServerThatRefusesTheConnectionFails) {
  const temp_dir out;
  const refused_port port;
  const run_result r =
      prepare_data("tinyshakespeare --out " + q(out.path()) + " --vocab-url " + port.url() + "/gpt2", kCleanEnv);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot download " + port.url() + "/gpt2/encoder.json (could not connect"), std::string::npos)
      << r.err;
  // What to do without a network: every file, its source and checksum, and WB_DATA.
  EXPECT_NE(r.err.find("To work offline"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(tinyshakespeare_file().url), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sha256 " + vocab_bpe_file().sha256), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("set WB_DATA to that folder"), std::string::npos) << r.err;
  EXPECT_EQ(files_under(out.path()), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(out / "gpt2"));
}

TEST(Download, AFileTheServerDoesNotHaveFails) {
  WB_REQUIRE_PYTHON3();
  const temp_dir served, out;
  const loopback_server server(served.path());  // an empty folder
  const run_result r = prepare_data(
      "tinyshakespeare --out " + q(out.path()) + " " + fixture().url_args(server.url()) + " " + fixture().sha256_args(),
      kCleanEnv);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(
      r.err.find("cannot download " + server.url() + "/gpt2/encoder.json (the server answered with an HTTP error"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(files_under(out.path()), std::vector<std::string>{});
}

// The real files through the download path, against the pinned checksums (no override).
TEST(Download, TheRealFilesPassThePinnedChecksums) {
  WB_REQUIRE_DATA();
  WB_REQUIRE_PYTHON3();
  const temp_dir served, out;
  fs::create_directories(served / "gpt2");
  fs::copy_file(data_dir() / "tinyshakespeare.txt", served / "input.txt");
  fs::copy_file(vocab_dir() / "encoder.json", served / "gpt2" / "encoder.json");
  fs::copy_file(vocab_dir() / "vocab.bpe", served / "gpt2" / "vocab.bpe");
  const loopback_server server(served.path());
  const run_result r =
      prepare_data("tinyshakespeare --out " + q(out.path()) + " " + fixture().url_args(server.url()), kCleanEnv);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("tiny_shakespeare_val.bin: 32768 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiny_shakespeare_train.bin: 305260 tokens"), std::string::npos) << r.out;
}

TEST(DataLookup, WbDataComesBeforeTheCacheAndIsVerified) {
  const temp_dir data, out;
  const fixture fx;
  fx.write(data.path());
  const std::string env = kCleanEnv + " WB_DATA=" + q(data.path());
  run_result r = prepare_data("tinyshakespeare --out " + q(out.path()) + " " + fx.sha256_args(), env);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("encoder.json: " + (data / "gpt2" / "encoder.json").string() + " (WB_DATA, sha256 verified)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("tinyshakespeare.txt: " + (data / "tinyshakespeare.txt").string() + " (WB_DATA"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(read_token_file(out / "tiny_shakespeare_val.bin"), fx.tokens().val);
  EXPECT_FALSE(fs::exists(out / "gpt2"));  // nothing downloaded

  // The same files against the pinned checksums: not GPT-2's, so an error naming the file.
  r = prepare_data("tokenizer --out " + q(out.path()), env);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find((data / "gpt2" / "encoder.json").string() +
                       " (WB_DATA) does not have the expected SHA-256: "
                       "expected " +
                       encoder_json_file().sha256 + ", got " + sha256_hex(fx.vocab.encoder_json)),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("give it explicitly (--input, --vocab) to use it unchecked"), std::string::npos) << r.err;
}

TEST(DataLookup, WbDataThatIsNoFolderIsAnError) {
  const temp_dir out;
  const run_result r = prepare_data("tokenizer --out " + q(out.path()), kCleanEnv + " WB_DATA=" + q(out / "nowhere"));
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("WB_DATA=" + (out / "nowhere").string() + " is not a folder"), std::string::npos) << r.err;
}

// Without options or WB_DATA, the build's data cache (the offline data these tests use).
TEST(DataLookup, TheCacheServesACommandWithoutOptions) {
  WB_REQUIRE_DATA();
  const temp_dir out;
  run_result r = prepare_data("tinyshakespeare --out " + q(out.path()), kCleanEnv);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("(the data cache, sha256 verified)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiny_shakespeare_train.bin: 305260 tokens"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out / "gpt2"));
  write_bytes(out / "text.txt", "Hello world\n");
  r = prepare_data("encode " + q(out / "text.txt"), kCleanEnv);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "15496 995 198\n");
}

TEST(PrepareDataErrors, Sha256Option) {
  const temp_dir out;
  for (const std::string& bad :
       std::vector<std::string>{"encoder.json=abc", "model.bin=" + std::string(64, 'a'), "encoder.json"}) {
    const run_result r = prepare_data("tokenizer --out " + q(out.path()) + " --sha256 " + bad, kCleanEnv);
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--sha256 takes NAME=HEX, NAME one of tinyshakespeare.txt, encoder.json, vocab.bpe"),
              std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace wb::tokenizer::test
