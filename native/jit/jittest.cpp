// samplejit-test: a standalone host for the sample JIT. dlopens a JIT, answers the JIT-EE interface
// with canned data, compiles IL given as hex (or a file of methods), prints the result and the code.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "corinfo.h"

static const char* const USAGE =
    "usage: samplejit-test [options] JIT.so (IL-HEX | -f FILE)\n"
    "  -target x64|arm64      getExpectedTargetArchitecture (default x64)\n"
    "  -args N -locals N      method signature (defaults 2, 0); -ret void|int|long (default long)\n"
    "  -maxstack N            CORINFO_METHOD_INFO.maxStack (default 8)\n"
    "  -minopts               getJitFlags reports CORJIT_FLAG_MIN_OPT\n"
    "  -config NAME=VALUE     getIntConfigValue / getStringConfigValue answer (repeatable)\n"
    "  -assert-break          doAssert returns 1 (the JIT breaks into the debugger: SIGTRAP)\n"
    "  -assert-throw          doAssert throws a C++ exception, as superpmi's does (default: returns 0)\n"
    "  -catch                 report a fatal signal (number, fault address) on an alternate stack\n"
    "  -sigthrow              turn SIGSEGV into a C++ exception thrown from the handler (PAL-like)\n"
    "  -quiet                 do not print the code bytes\n"
    "Tokens: resolveToken(T) -> method handle 0x00007FF000000000|T; getMethodSig: numArgs = (T >> 4) & 0xF,\n"
    "retType = T & 3 (0 void, 1 int, else long); T = 0xFFFFFFFF makes resolveToken throw (an EE exception).\n"
    "FILE: one method per line, `[args=N] [locals=N] [ret=void|int|long] HEX`; # comments.\n";

struct HostException : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Options {
    uint32_t target = IMAGE_FILE_MACHINE_AMD64;
    bool minOpts = false, assertBreak = false, assertThrow = false, quiet = false;
    std::map<std::string, int> config;
    std::map<std::string, std::string> strings;
} g_opts;

class TestHost : public ICorJitHost {
public:
    int methodIndex = 0;
    int getIntConfigValue(const char* name, int defaultValue) override {
        auto it = g_opts.config.find(name);
        if (it != g_opts.config.end()) {
            return it->second;
        }
        return strcmp(name, "SuperPMIMethodContextNumber") == 0 ? methodIndex : defaultValue;
    }
    const char* getStringConfigValue(const char* name) override {
        auto it = g_opts.strings.find(name);
        return it != g_opts.strings.end() ? strdup(it->second.c_str()) : nullptr;
    }
    void freeStringConfigValue(const char* value) override { free(const_cast<char*>(value)); }
    void* allocateMemory(size_t size) override { return malloc(size); }
    void freeMemory(void* block) override { free(block); }
};

class TestJitInfo : public ICorJitInfo {
public:
    std::vector<uint8_t> code;
    uint32_t hotCodeSize = 0;
    int asserts = 0;

    uint32_t getExpectedTargetArchitecture() override { return g_opts.target; }
    uint32_t getJitFlags(CORJIT_FLAGS* flags, uint32_t sizeInBytes) override {
        if (sizeInBytes >= sizeof(CORJIT_FLAGS)) {
            flags->corJitFlags = g_opts.minOpts ? uint64_t(CORJIT_FLAG_MIN_OPT) : uint64_t(0);
            flags->instructionSetFlags = 0;
        }
        return sizeof(CORJIT_FLAGS);
    }
    void resolveToken(CORINFO_RESOLVED_TOKEN* token) override {
        if (token->token == 0xFFFFFFFFu) {
            throw HostException("resolveToken: recorded EE exception");
        }
        token->hClass = reinterpret_cast<CORINFO_CLASS_HANDLE>(uintptr_t(0x00007FE000000000ull));
        token->hMethod = reinterpret_cast<CORINFO_METHOD_HANDLE>(uintptr_t(0x00007FF000000000ull | token->token));
    }
    void getMethodSig(CORINFO_METHOD_HANDLE ftn, CORINFO_SIG_INFO* sig, CORINFO_CLASS_HANDLE) override {
        uint32_t t = uint32_t(reinterpret_cast<uintptr_t>(ftn));
        sig->callConv = 0;
        sig->numArgs = (t >> 4) & 0xF;
        sig->retType = (t & 3) == 0 ? CORINFO_TYPE_VOID : (t & 3) == 1 ? CORINFO_TYPE_INT : CORINFO_TYPE_LONG;
    }
    size_t printMethodName(CORINFO_METHOD_HANDLE ftn, char* buffer, size_t bufferSize) override {
        char name[64];
        int n = snprintf(name, sizeof(name), "Test:M%p", ftn);
        if (bufferSize > 0) {
            snprintf(buffer, bufferSize, "%s", name);
        }
        return size_t(n);
    }
    void allocMem(AllocMemArgs* args) override {
        hotCodeSize = args->hotCodeSize;
        code.assign(args->hotCodeSize + 1, 0xCC);
        args->hotCodeBlock = code.data();
        args->hotCodeBlockRW = code.data();
    }
    int doAssert(const char* file, int line, const char* expr) override {
        asserts++;
        printf("doAssert: %s:%d: %s\n", file, line, expr);
        fflush(stdout);
        if (g_opts.assertThrow) {
            throw HostException(std::string("assert: ") + expr);
        }
        return g_opts.assertBreak ? 1 : 0;
    }
    bool runWithErrorTrap(void (*function)(void*), void* parameter) override {
        try {
            function(parameter);
            return true;
        } catch (...) {
            return false;
        }
    }
};

static const char* resultName(CorJitResult r) {
    switch (r) {
        case CORJIT_OK: return "CORJIT_OK";
        case CORJIT_BADCODE: return "CORJIT_BADCODE";
        case CORJIT_OUTOFMEM: return "CORJIT_OUTOFMEM";
        case CORJIT_INTERNALERROR: return "CORJIT_INTERNALERROR";
        case CORJIT_SKIPPED: return "CORJIT_SKIPPED";
        case CORJIT_IMPLLIMITATION: return "CORJIT_IMPLLIMITATION";
        default: return "?";
    }
}

static void onSignal(int sig, siginfo_t* si, void*) {
    char buf[128];
    int n = snprintf(buf, sizeof(buf), "signal %d addr %p\n", sig, si->si_addr);
    ssize_t w = write(1, buf, size_t(n));
    (void)w;
    _exit(128 + sig);
}

// Like the PAL's hardware exception holder: a fault becomes a C++ exception thrown from the handler (the
// JIT is built with -fnon-call-exceptions so that this unwinds through the faulting frame).
static void onSignalThrow(int sig, siginfo_t* si, void*) {
    char buf[96];
    snprintf(buf, sizeof(buf), "signal %d addr %p", sig, si->si_addr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    throw HostException(buf);
}

static void installSignalThrower() {
    struct sigaction sa = {};
    sa.sa_sigaction = onSignalThrow;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, nullptr);
}

static void installSignalReporter() {
    static std::vector<char> altStack(1 << 16);
    stack_t ss = {};
    ss.ss_sp = altStack.data();
    ss.ss_size = altStack.size();
    sigaltstack(&ss, nullptr);
    struct sigaction sa = {};
    sa.sa_sigaction = onSignal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP}) {
        sigaction(sig, &sa, nullptr);
    }
}

static bool parseHex(const std::string& hex, std::vector<uint8_t>* out) {
    std::string digits;
    for (char c : hex) {
        if (!isspace((unsigned char)c)) {
            digits += c;
        }
    }
    if (digits.size() % 2 != 0) {
        return false;
    }
    out->clear();
    for (size_t i = 0; i < digits.size(); i += 2) {
        char* end = nullptr;
        std::string byte = digits.substr(i, 2);
        unsigned long v = strtoul(byte.c_str(), &end, 16);
        if (*end != '\0') {
            return false;
        }
        out->push_back(uint8_t(v));
    }
    return true;
}

struct MethodSpec {
    unsigned args = 2, locals = 0, maxStack = 8;
    CorInfoType ret = CORINFO_TYPE_LONG;
    std::vector<uint8_t> il;
};

static bool parseRet(const std::string& s, CorInfoType* ret) {
    if (s == "void") *ret = CORINFO_TYPE_VOID;
    else if (s == "int") *ret = CORINFO_TYPE_INT;
    else if (s == "long") *ret = CORINFO_TYPE_LONG;
    else return false;
    return true;
}

static int compileOne(ICorJitCompiler* jit, TestHost* host, int index, const MethodSpec& m) {
    TestJitInfo jitInfo;
    CORINFO_METHOD_INFO info = {};
    info.ftn = reinterpret_cast<CORINFO_METHOD_HANDLE>(uintptr_t(0x00007FF100000000ull + 0x40ull * unsigned(index)));
    info.scope = reinterpret_cast<CORINFO_MODULE_HANDLE>(uintptr_t(0x00007FF200000000ull));
    info.ILCode = m.il.data();
    info.ILCodeSize = uint32_t(m.il.size());
    info.maxStack = m.maxStack;
    info.args.numArgs = m.args;
    info.args.retType = m.ret;
    info.locals.numArgs = m.locals;
    host->methodIndex = index;
    uint8_t* entry = nullptr;
    uint32_t size = 0;
    CorJitResult r;
    try {
        r = jit->compileMethod(&jitInfo, &info, 0, &entry, &size);
    } catch (const HostException& e) {
        printf("method %d: host exception: %s\n", index, e.what());
        return 0;
    }
    printf("method %d: result=0x%08x (%s) nativeSizeOfCode=%u hotCodeSize=%u", index, uint32_t(r), resultName(r),
           size, r == CORJIT_OK ? jitInfo.hotCodeSize : 0);
    if (r == CORJIT_OK && entry != jitInfo.code.data()) {
        printf(" BAD-ENTRY");
    }
    if (r == CORJIT_OK && jitInfo.code[jitInfo.hotCodeSize] != 0xCC) {
        printf(" OVERRUN");
    }
    if (r == CORJIT_OK && !g_opts.quiet) {
        printf(" code=");
        for (uint32_t i = 0; i < jitInfo.hotCodeSize; i++) {
            printf("%02x", jitInfo.code[i]);
        }
    }
    printf("\n");
    fflush(stdout);
    return 0;
}

int main(int argc, char** argv) {
    MethodSpec defaults;
    const char* jitPath = nullptr;
    const char* file = nullptr;
    std::string hex;
    bool catchSignals = false, sigThrow = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s needs a value\n%s", a.c_str(), USAGE);
                exit(2);
            }
            return argv[++i];
        };
        if (a == "-target") {
            std::string t = next();
            g_opts.target = t == "arm64" ? IMAGE_FILE_MACHINE_ARM64 : t == "x64" ? IMAGE_FILE_MACHINE_AMD64 : uint32_t(strtoul(t.c_str(), nullptr, 0));
        } else if (a == "-args") defaults.args = unsigned(strtoul(next().c_str(), nullptr, 0));
        else if (a == "-locals") defaults.locals = unsigned(strtoul(next().c_str(), nullptr, 0));
        else if (a == "-maxstack") defaults.maxStack = unsigned(strtoul(next().c_str(), nullptr, 0));
        else if (a == "-ret") {
            if (!parseRet(next(), &defaults.ret)) { fprintf(stderr, "bad -ret\n"); return 2; }
        } else if (a == "-minopts") g_opts.minOpts = true;
        else if (a == "-assert-break") g_opts.assertBreak = true;
        else if (a == "-assert-throw") g_opts.assertThrow = true;
        else if (a == "-catch") catchSignals = true;
        else if (a == "-sigthrow") sigThrow = true;
        else if (a == "-quiet") g_opts.quiet = true;
        else if (a == "-config") {
            std::string kv = next();
            size_t eq = kv.find('=');
            if (eq == std::string::npos) { fprintf(stderr, "bad -config\n"); return 2; }
            g_opts.config[kv.substr(0, eq)] = atoi(kv.c_str() + eq + 1);
            g_opts.strings[kv.substr(0, eq)] = kv.substr(eq + 1);
        } else if (a == "-f") { file = argv[i + 1 < argc ? ++i : i]; }
        else if (a == "-h" || a == "--help") { fputs(USAGE, stdout); return 0; }
        else if (jitPath == nullptr) jitPath = argv[i];
        else hex += a;
    }
    if (jitPath == nullptr || (file == nullptr && hex.empty())) {
        fputs(USAGE, stderr);
        return 2;
    }
    void* lib = dlopen(jitPath, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    auto startup = reinterpret_cast<PjitStartup>(dlsym(lib, "jitStartup"));
    auto getJit = reinterpret_cast<PgetJit>(dlsym(lib, "getJit"));
    if (startup == nullptr || getJit == nullptr) {
        fprintf(stderr, "jitStartup/getJit not exported\n");
        return 2;
    }
    if (catchSignals) {
        installSignalReporter();
    }
    if (sigThrow) {
        installSignalThrower();
    }
    TestHost host;
    startup(&host);
    ICorJitCompiler* jit = getJit();

    std::vector<MethodSpec> methods;
    if (file == nullptr) {
        MethodSpec m = defaults;
        if (!parseHex(hex, &m.il)) { fprintf(stderr, "bad IL hex\n"); return 2; }
        methods.push_back(m);
    } else {
        std::ifstream in(file);
        if (!in) { fprintf(stderr, "cannot read %s\n", file); return 2; }
        std::string line;
        while (std::getline(in, line)) {
            if (line.empty() || line[0] == '#') continue;
            MethodSpec m = defaults;
            std::istringstream words(line);
            std::string w, ilHex;
            while (words >> w) {
                if (w.rfind("args=", 0) == 0) m.args = unsigned(strtoul(w.c_str() + 5, nullptr, 0));
                else if (w.rfind("locals=", 0) == 0) m.locals = unsigned(strtoul(w.c_str() + 7, nullptr, 0));
                else if (w.rfind("maxstack=", 0) == 0) m.maxStack = unsigned(strtoul(w.c_str() + 9, nullptr, 0));
                else if (w.rfind("ret=", 0) == 0) { if (!parseRet(w.substr(4), &m.ret)) { fprintf(stderr, "bad ret\n"); return 2; } }
                else ilHex += w;
            }
            if (!parseHex(ilHex, &m.il)) { fprintf(stderr, "bad IL hex: %s\n", line.c_str()); return 2; }
            methods.push_back(m);
        }
    }
    for (size_t i = 0; i < methods.size(); i++) {
        compileOne(jit, &host, int(i + 1), methods[i]);
    }
    return 0;
}
