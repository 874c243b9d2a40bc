// Just enough of a JSON parser to read back the Chrome traces the runtime
// writes; a malformed document makes parse() return false.
#ifndef KILN_TEST_MINIJSON_H
#define KILN_TEST_MINIJSON_H

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace minijson {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } K = Null;
  double Num = 0;
  std::string Str;
  std::vector<Value> Items;
  std::map<std::string, Value> Fields;

  const Value *get(const std::string &Key) const {
    auto It = Fields.find(Key);
    return It == Fields.end() ? nullptr : &It->second;
  }
};

class Parser {
public:
  explicit Parser(const std::string &Text) : T(Text) {}

  bool parse(Value &Out) {
    if (!value(Out))
      return false;
    ws();
    return P == T.size();
  }

private:
  void ws() {
    while (P < T.size() &&
           (T[P] == ' ' || T[P] == '\n' || T[P] == '\r' || T[P] == '\t'))
      ++P;
  }
  bool lit(const char *S) {
    std::string L(S);
    if (T.compare(P, L.size(), L) != 0)
      return false;
    P += L.size();
    return true;
  }
  bool string(std::string &Out) {
    if (P >= T.size() || T[P] != '"')
      return false;
    ++P;
    while (P < T.size() && T[P] != '"') {
      char C = T[P++];
      if (static_cast<unsigned char>(C) < 0x20)
        return false; // raw control characters are invalid JSON
      if (C != '\\') {
        Out += C;
        continue;
      }
      if (P >= T.size())
        return false;
      char E = T[P++];
      switch (E) {
      case '"':
      case '\\':
      case '/':
        Out += E;
        break;
      case 'n':
        Out += '\n';
        break;
      case 't':
        Out += '\t';
        break;
      case 'r':
        Out += '\r';
        break;
      case 'b':
        Out += '\b';
        break;
      case 'f':
        Out += '\f';
        break;
      case 'u': {
        if (P + 4 > T.size())
          return false;
        long V = std::strtol(T.substr(P, 4).c_str(), nullptr, 16);
        P += 4;
        if (V >= 0x80)
          return false; // not needed by these tests
        Out += static_cast<char>(V);
        break;
      }
      default:
        return false;
      }
    }
    if (P >= T.size())
      return false;
    ++P;
    return true;
  }
  bool value(Value &V) {
    ws();
    if (P >= T.size())
      return false;
    char C = T[P];
    if (C == '[') {
      V.K = Value::Array;
      ++P;
      ws();
      if (P < T.size() && T[P] == ']')
        return ++P, true;
      for (;;) {
        V.Items.emplace_back();
        if (!value(V.Items.back()))
          return false;
        ws();
        if (P < T.size() && T[P] == ',') {
          ++P;
          continue;
        }
        return P < T.size() && T[P++] == ']';
      }
    }
    if (C == '{') {
      V.K = Value::Object;
      ++P;
      ws();
      if (P < T.size() && T[P] == '}')
        return ++P, true;
      for (;;) {
        ws();
        std::string Key;
        if (!string(Key))
          return false;
        ws();
        if (P >= T.size() || T[P++] != ':')
          return false;
        if (!value(V.Fields[Key]))
          return false;
        ws();
        if (P < T.size() && T[P] == ',') {
          ++P;
          continue;
        }
        return P < T.size() && T[P++] == '}';
      }
    }
    if (C == '"') {
      V.K = Value::String;
      return string(V.Str);
    }
    if (lit("true") || lit("false")) {
      V.K = Value::Bool;
      return true;
    }
    if (lit("null"))
      return true;
    const char *Begin = T.c_str() + P;
    char *End = nullptr;
    V.Num = std::strtod(Begin, &End);
    if (End == Begin)
      return false;
    V.K = Value::Number;
    P += End - Begin;
    return true;
  }

  const std::string &T;
  size_t P = 0;
};

inline bool parse(const std::string &Text, Value &Out) {
  return Parser(Text).parse(Out);
}

} // namespace minijson

#endif // KILN_TEST_MINIJSON_H
