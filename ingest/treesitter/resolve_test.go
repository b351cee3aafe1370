package treesitter

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/ingest"
)

// resolved extracts a tree written from files (path → content) and lists
// its calls, references and implements edges as "src rel dst", with the
// language's "sym:<tag>:" prefix cut from both ends.
func resolved(t *testing.T, langs []string, files map[string]string) []string {
	t.Helper()
	res := extractFiles(t, langs, files)
	var out []string
	for _, e := range res.Graph.Edges() {
		switch e.Rel {
		case ingest.RelCalls, ingest.RelReferences, ingest.RelImplements:
			out = append(out, trimTag(e.Src)+" "+e.Rel+" "+trimTag(e.Dst))
		}
	}
	slices.Sort(out)
	return out
}

// extractFiles extracts a tree written from files (path → content).
func extractFiles(t *testing.T, langs []string, files map[string]string) *Result {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Extract(dir, langs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkUnresolved compares the unresolved calls counted for lang with a
// hand count.
func checkUnresolved(t *testing.T, lang string, files map[string]string, want int) {
	t.Helper()
	if n := extractFiles(t, []string{lang}, files).Lang(lang).Unresolved; n != want {
		t.Errorf("unresolved %d, want %d", n, want)
	}
}

func trimTag(key string) string {
	if rest, ok := strings.CutPrefix(key, "sym:"); ok {
		if i := strings.IndexByte(rest, ':'); i > 0 {
			return rest[i+1:]
		}
	}
	return key
}

func checkResolved(t *testing.T, langs []string, files map[string]string, want []string) {
	t.Helper()
	slices.Sort(want)
	if diff := cmp.Diff(want, resolved(t, langs, files)); diff != "" {
		t.Errorf("edges (-want +got):\n%s", diff)
	}
}

// Python: the callers a type checker finds, pattern by pattern, on small
// trees; every want list is derived by hand from the sources.
func TestPythonResolve(t *testing.T) {
	py := []string{ingest.LangPython}
	for _, c := range []struct {
		name  string
		files map[string]string
		want  []string
	}{{
		// A nested function has its own node (key outer.inner) and its own
		// calls; its name is bound in the function around it.
		name: "nested functions",
		files: map[string]string{
			"pkg/__init__.py": "",
			"pkg/a.py": `def outer():
    def inner():
        return helper()
    return inner()

def helper():
    pass

def other():
    inner()  # not outer's inner: unresolved
`,
		},
		want: []string{
			"pkg.a.outer calls pkg.a.outer.inner",
			"pkg.a.outer.inner calls pkg.a.helper",
		},
	}, {
		// A decorator is a call of the decorator, made by the decorated
		// def; a property read calls the property; a method named without
		// a call is a reference, as is a class named in an annotation.
		name: "decorators, properties, mentions",
		files: map[string]string{
			"pkg/__init__.py": "",
			"pkg/a.py": `def deco(f):
    return f

class C:
    @deco
    def m(self):
        pass

    @property
    def p(self) -> "D":
        return D()

class D:
    def run(self):
        pass

def use(c: C):
    c.p.run()
    return c.m

def register(f):
    pass

register(deco)
`,
		},
		want: []string{
			"pkg.a.C.m calls pkg.a.deco",
			"pkg.a.C.p references pkg.a.D",
			"pkg.a.use references pkg.a.C",
			"pkg.a.use calls pkg.a.C.p",
			"pkg.a.use calls pkg.a.D.run",
			"pkg.a.use references pkg.a.C.m",
			"file:pkg/a.py calls pkg.a.register",
			"file:pkg/a.py references pkg.a.deco",
		},
	}, {
		// Values: a constructor call, self.x assigned in __init__ from an
		// annotated parameter or a constructor, an annotated return. A
		// name assigned values that disagree, or whose value is unknown,
		// resolves nothing.
		name: "instances",
		files: map[string]string{
			"pkg/__init__.py": "",
			"pkg/a.py": `class Store:
    def save(self) -> None:
        pass

class Cache:
    def get(self):
        pass

class Engine:
    def __init__(self, store: "Store | None"):
        self.store = store
        self.cache = Cache()

    def go(self):
        self.store.save()
        self.cache.get()

    def clone(self) -> "Engine":
        return self

def main():
    e = Engine(None)
    e.clone().go()

def mixed(flag):
    e = Engine(None)
    if flag:
        e = Store()
    e.go()

def untyped(x):
    x.go()
`,
		},
		want: []string{
			// (a type named in a string is not read as a mention)
			"pkg.a.Engine.__init__ references pkg.a.Cache",
			"pkg.a.Engine.go calls pkg.a.Cache.get",
			"pkg.a.Engine.go calls pkg.a.Store.save",
			"pkg.a.main references pkg.a.Engine",
			"pkg.a.main calls pkg.a.Engine.clone",
			"pkg.a.main calls pkg.a.Engine.go",
			"pkg.a.mixed references pkg.a.Engine",
			"pkg.a.mixed references pkg.a.Store",
		},
	}, {
		// A namespace package inside a package (sansio/ has no
		// __init__.py) continues its dotted name; bases through an alias
		// and generic bases implement; a method declared in a base is
		// found through the subclass, a property of a base wins over an
		// assignment to the same name.
		name: "namespace packages and bases",
		files: map[string]string{
			"src/pkg/__init__.py": "",
			"src/pkg/sansio/app.py": `import typing as t

T = t.TypeVar("T")

class App:
    def route(self):
        pass

    @property
    def debug(self) -> bool:
        return False

class Param(t.Generic[T]):
    pass
`,
			"src/pkg/app.py": `from .sansio.app import App as SansioApp, Param

class Flask(SansioApp):
    def run(self):
        self.debug = True
        self.route()

class BoolParam(Param[bool]):
    pass
`,
		},
		want: []string{
			"pkg.app.Flask implements pkg.sansio.app.App",
			"pkg.app.BoolParam implements pkg.sansio.app.Param",
			"pkg.app.Flask.run calls pkg.sansio.app.App.debug",
			"pkg.app.Flask.run calls pkg.sansio.app.App.route",
		},
	}, {
		// A base outside the tree may define any method: a name it could
		// hold is unknown, unless the class itself declares it.
		name: "external bases",
		files: map[string]string{
			"pkg/__init__.py": "",
			"pkg/a.py": `from lib import Client

class Base:
    def get(self):
        pass

class Mine(Client, Base):
    def own(self):
        self.get()

def use():
    m = Mine()
    m.own()
    m.get()
`,
		},
		want: []string{
			"pkg.a.Mine implements pkg.a.Base",
			"pkg.a.use references pkg.a.Mine",
			"pkg.a.use calls pkg.a.Mine.own",
		},
	}} {
		t.Run(c.name, func(t *testing.T) { checkResolved(t, py, c.files, c.want) })
	}
}

// TypeScript: new C() calls C's constructor (its own or inherited) and
// super(…) the base's; a variable declared with new C() is a C, so its
// methods (private #m too) resolve; a class only named in a type is a
// reference, never a constructor call.
func TestTypeScriptResolve(t *testing.T) {
	checkResolved(t, []string{ingest.LangTypeScript}, map[string]string{
		"src/a.ts": `export class Base {
	constructor(readonly n: number) {}
}

export class Err extends Base {
	constructor() {
		super(1);
	}
}

export class Plain extends Base {}

export class Ky {
	#fetch() {
		return new Err();
	}

	static create(): Ky {
		const ky = new Ky();
		ky.#fetch();
		return ky;
	}
}

export function make(e: Err) {
	const p = new Plain(2);
	let other = e;
	other.toString();
	return p;
}
`,
	}, []string{
		"src/a.ts#Err implements src/a.ts#Base",
		"src/a.ts#Plain implements src/a.ts#Base",
		"src/a.ts#Err.constructor calls src/a.ts#Base.constructor",
		"src/a.ts#Ky.#fetch references src/a.ts#Err",
		"src/a.ts#Ky.#fetch calls src/a.ts#Err.constructor",
		"src/a.ts#Ky.create references src/a.ts#Ky",
		"src/a.ts#Ky.create calls src/a.ts#Ky.#fetch",
		"src/a.ts#make references src/a.ts#Err",
		"src/a.ts#make references src/a.ts#Plain",
		"src/a.ts#make calls src/a.ts#Base.constructor",
	})
}

// JavaScript CommonJS, hand-derived: members assigned to an object
// (res.send = function…), to a constructor function's prototype
// (View.prototype.render) or to a function itself (User.count) are
// symbols; this in them is the object, an instance, or the function,
// never the this of a function nested in them; require() returns
// module.exports (whole, destructured, .name); a function named as a
// value is a reference. Negative: a prototype member is not a member of
// the function (View.lookup()), a static one not of the instances
// (this.count() in a prototype member), a parameter shadows an import,
// and this in a nested function expression resolves to nothing.
func TestJavaScriptCommonJS(t *testing.T) {
	checkResolved(t, []string{ingest.LangJavaScript}, map[string]string{
		"lib/res.js": `var res = Object.create(null);
module.exports = res;

res.send = function send(body) {
	this.set('x');
	return this;
};

res.set = function (k) {
	[1].forEach(function () {
		this.send(k);
	});
	return k;
};
`,
		"lib/view.js": `module.exports = View;

function View(name) {
	this.name = name;
	this.path = this.lookup(name);
}

View.prototype.lookup = function lookup(name) {
	this.count();
	return tryStat(name);
};

View.count = function () {
	View.lookup();
	return 0;
};

function tryStat(p) {
	return p;
}
`,
		"lib/utils.js": `exports.normalize = function (t) {
	return helper(t);
};

exports.helper = helper;

function helper(t) {
	return t;
}
`,
		"lib/app.js": `var app = exports = module.exports = {};
var View = require('./view');
var res = require('./res');
var { normalize } = require('./utils');
var helper = require('./utils').helper;

app.render = function render(name, cb) {
	var view = new View(name);
	view.lookup(name);
	res.send(normalize(name));
	this.init();
	helper(1);
	cb(tryAgain);
};

app.init = function init() {
	View.count();
	tryAgain.call(this, 1);
};

function tryAgain(normalize) {
	normalize();
}
`,
	}, []string{
		"lib/res.js#res.send calls lib/res.js#res.set",
		"lib/view.js#View calls lib/view.js#View.lookup",
		"lib/view.js#View.lookup calls lib/view.js#tryStat",
		"lib/view.js#View.count references lib/view.js#View",
		"lib/app.js#app.render references lib/view.js#View",
		"lib/app.js#app.render calls lib/view.js#View.lookup",
		"lib/app.js#app.render calls lib/res.js#res.send",
		"lib/app.js#app.render calls lib/utils.js#normalize",
		"lib/app.js#app.render calls lib/app.js#app.init",
		"lib/app.js#app.render calls lib/utils.js#helper",
		"lib/app.js#app.render references lib/app.js#tryAgain",
		"lib/app.js#app.init references lib/view.js#View",
		"lib/app.js#app.init calls lib/view.js#View.count",
		"lib/app.js#app.init calls lib/app.js#tryAgain",
		"lib/utils.js#normalize calls lib/utils.js#helper",
		"file:lib/view.js references lib/view.js#View",     // module.exports = View
		"file:lib/utils.js references lib/utils.js#helper", // exports.helper = helper
	})
}

// TypeScript: a class named only in a type (an annotation, instanceof,
// implements) is never a call; its constructor is called only by new.
func TestTypeScriptTypeOnlyMentions(t *testing.T) {
	checkResolved(t, []string{ingest.LangTypeScript}, map[string]string{
		"a.ts": `export interface Shape { area(): number }

export class Box implements Shape {
	constructor() {}
	area() { return 1; }
}

export function check(x: unknown, b: Box): boolean {
	return x instanceof Box && b !== null;
}
`,
	}, []string{
		"a.ts#Box implements a.ts#Shape",
		"a.ts#check references a.ts#Box",
	})
}

// TypeScript values typed from what the source declares, one function
// per rule, hand-derived: a parameter's annotation (c: Client; h?: Http |
// null), a variable's annotation (s: Store), a called function's return
// type (make(): Client), an awaited one's (Promise<Http>), fields declared
// in the class (#http: Http), set in the constructor (this.#http = new
// Http()), by parameter properties (private readonly store: Store) and
// inherited ones. Negative, and counted unresolved: other(), z declared
// twice with different values (z.close(), z.run()), and t of a type
// parameter that shadows the class Client (t.run()).
func TestTypeScriptDeclaredTypes(t *testing.T) {
	files := map[string]string{
		"a.ts": `export interface Store { get(k: string): string; put(): void; }
export class Http { send(): void {} close(): void {} open(): void {} }
export class Client {
	#http: Http;
	constructor(private readonly store: Store, public base: Http) {
		this.#http = new Http();
	}
	fetch(): Promise<Http> { return Promise.resolve(this.base); }
	run() {}
	viaField() { this.#http.send(); }
	viaParamProperty() { this.store.get("k"); this.base.close(); }
}
export function make(): Client { return new Client(null, null); }
`,
		"b.ts": `import { make, Client, Http, Store } from "./a";
export function param(c: Client) { c.run(); }
export function optional(h?: Http | null) { h.open(); }
export function returned() { const k = make(); k.viaField(); }
export async function awaited(c: Client) { const x = await c.fetch(); x.send(); }
export function annotated() { const s: Store = other(); s.put(); }
export function disagree(c: Client) { let z = make(); if (c) { let z = new Http(); z.close(); } z.run(); }
export function generic<Client>(t: Client) { t.run(); }
export class Sub extends Client { more() { this.base.send(); this.store.put(); } }
`,
	}
	checkResolved(t, []string{ingest.LangTypeScript}, files, []string{
		"a.ts#Client references a.ts#Http",
		"a.ts#Client.constructor references a.ts#Http",
		"a.ts#Client.constructor references a.ts#Store",
		"a.ts#Client.fetch references a.ts#Http",
		"a.ts#Client.viaField calls a.ts#Http.send",
		"a.ts#Client.viaParamProperty calls a.ts#Store.get",
		"a.ts#Client.viaParamProperty calls a.ts#Http.close",
		"a.ts#make references a.ts#Client",
		"a.ts#make calls a.ts#Client.constructor",
		"b.ts#param references a.ts#Client",
		"b.ts#param calls a.ts#Client.run",
		"b.ts#optional references a.ts#Http",
		"b.ts#optional calls a.ts#Http.open",
		"b.ts#returned calls a.ts#make",
		"b.ts#returned calls a.ts#Client.viaField",
		"b.ts#awaited references a.ts#Client",
		"b.ts#awaited calls a.ts#Client.fetch",
		"b.ts#awaited calls a.ts#Http.send",
		"b.ts#annotated references a.ts#Store",
		"b.ts#annotated calls a.ts#Store.put",
		"b.ts#disagree references a.ts#Client",
		"b.ts#disagree references a.ts#Http",
		"b.ts#disagree calls a.ts#make",
		"b.ts#Sub implements a.ts#Client",
		"b.ts#Sub.more calls a.ts#Http.send",
		"b.ts#Sub.more calls a.ts#Store.put",
	})
	checkUnresolved(t, ingest.LangTypeScript, files, 4)
}

// JavaScript object literals, hand-derived: the functions of
// module.exports = {…} are the file's exports (pair, method, arrow), those
// of a top-level var's object literal members of the var, whose this is
// the object; a property that is not a function defines nothing
// (limit: 10) and calling it is unresolved, as is this.other() in a
// nested function expression.
func TestJavaScriptObjectLiterals(t *testing.T) {
	files := map[string]string{
		"lib/request.js": `module.exports = {
	get: function get(name) {
		return normalize(name);
	},
	accepts(type) {
		return this.is(type);
	},
	is: (t) => t,
	limit: 10,
};

function normalize(n) { return n; }
`,
		"lib/util.js": `var util = {
	parse: function (s) {
		return this.split(s);
	},
	split(s) {
		[1].forEach(function () { this.other(); });
		return s;
	},
};

module.exports = util;
`,
		"lib/app.js": `var request = require('./request');
var util = require('./util');
var accepts = require('./request').accepts;

function handle(r) {
	request.get(r);
	util.parse(r);
	accepts(r);
	request.limit();
}
`,
	}
	checkResolved(t, []string{ingest.LangJavaScript}, files, []string{
		"lib/request.js#get calls lib/request.js#normalize",
		"lib/util.js#util.parse calls lib/util.js#util.split",
		"lib/app.js#handle calls lib/request.js#get",
		"lib/app.js#handle calls lib/util.js#util.parse",
		"lib/app.js#handle calls lib/request.js#accepts",
	})
	// this.is(type) (a module.exports object's this is not followed),
	// [1].forEach(…), this.other(), request.limit().
	checkUnresolved(t, ingest.LangJavaScript, files, 4)
}

// Python elements of standard containers, hand-derived: iterating
// list[T] (a parameter's annotation, an attribute annotated in __init__,
// t.Sequence[T] through import typing as t, tuple[T, ...]; in a for
// statement or a comprehension) gives a T, as
// subscripting it does; iterating dict[K, V] gives a K and subscripting it
// a V; a class of the tree is iterated by its __iter__ (-> Iterator[T])
// and subscripted by its __getitem__. Negative: set[T] has no subscript
// (s[0].run() unresolved), a loop variable bound by two loops over
// different types is unknown (x.run() unresolved); methods of the
// containers themselves (order.append) are outside the tree, not counted.
func TestPythonContainerElements(t *testing.T) {
	files := map[string]string{
		"m.py": `import typing as t
from typing import Iterator

class Tag:
    def check(self): pass

class Key:
    def norm(self): pass

class Job:
    def run(self): pass

class Jobs:
    def __iter__(self) -> Iterator[Job]: ...
    def __getitem__(self, i: int) -> Job: ...

class Serializer:
    def __init__(self):
        self.order: list[Tag] = []
        self.tags: dict[Key, Tag] = {}

    def iterate(self):
        for tag in self.order:
            tag.check()
        self.order.append(None)

    def keys(self):
        for k in self.tags:
            k.norm()

    def subscripted(self, key):
        self.tags[key].check()

def seq(xs: t.Sequence[Job], ys: tuple[Job, ...]):
    xs[0].run()
    for y in ys:
        y.run()

def custom(jobs: Jobs):
    for j in jobs:
        j.run()

def custom_sub(jobs: Jobs):
    jobs[1].run()

def comprehension(xs: list[Job]):
    return [x.run() for x in xs]

def negative(s: set[Job], a: list[Job], b: list[Tag]):
    s[0].run()
    for x in a:
        pass
    for x in b:
        pass
    x.run()
`,
	}
	checkResolved(t, []string{ingest.LangPython}, files, []string{
		"m.Jobs.__iter__ references m.Job",
		"m.Jobs.__getitem__ references m.Job",
		"m.Serializer.iterate calls m.Tag.check",
		"m.Serializer.__init__ references m.Tag",
		"m.Serializer.__init__ references m.Key",
		"m.Serializer.keys calls m.Key.norm",
		"m.Serializer.subscripted calls m.Tag.check",
		"m.seq references m.Job",
		"m.seq calls m.Job.run",
		"m.custom references m.Jobs",
		"m.custom calls m.Job.run",
		"m.custom_sub references m.Jobs",
		"m.custom_sub calls m.Job.run",
		"m.comprehension references m.Job",
		"m.comprehension calls m.Job.run",
		"m.negative references m.Job",
		"m.negative references m.Tag",
	})
	checkUnresolved(t, ingest.LangPython, files, 2)
}

// Python attributes of a class with a base outside the tree, hand-derived:
// an attribute the class itself declares comes first in the lookup
// (self.app.run() resolves); one declared only in a base after the
// outside one may be the outside base's (self.other.run() is unresolved).
func TestPythonAttributesBeforeExternalBase(t *testing.T) {
	checkResolved(t, []string{ingest.LangPython}, map[string]string{
		"m.py": `from ext import Base

class App:
    def run(self): pass

class Loader(Base):
    def __init__(self, app: App):
        self.app = app

    def load(self):
        self.app.run()

class Mixin:
    other: App

class Both(Base, Mixin):
    def go(self):
        self.other.run()
`,
	}, []string{
		"m.Loader.__init__ references m.App",
		"m.Loader.load calls m.App.run",
		"m.Mixin references m.App",
		"m.Both implements m.Mixin",
	})
}

// Python with-statements, hand-derived: with cm as x binds what
// cm.__enter__() returns (-> Self: the context manager's class; -> T: T;
// a ContextManager[T]: T; a @contextmanager generator's call: what it
// yields, Iterator[T]); a context manager whose __enter__ is not in the
// tree leaves x unknown.
func TestPythonWithAs(t *testing.T) {
	checkResolved(t, []string{ingest.LangPython}, map[string]string{
		"m.py": `from contextlib import contextmanager
from typing import ContextManager, Iterator, Self

class Session:
    def save(self): pass

class Ctx:
    def __enter__(self) -> Self: ...
    def push(self): pass

class Tx:
    def __enter__(self) -> Session: ...

class Plain:
    pass

@contextmanager
def session() -> Iterator[Session]:
    yield Session()

def managed(cm: ContextManager[Ctx]):
    with session() as s:
        s.save()
    with cm as c:
        c.push()

def use():
    with Ctx() as c, Tx() as s:
        c.push()
        s.save()
    with Plain() as p:
        p.save()
`,
	}, []string{
		"m.session references m.Session",
		"m.managed references m.Ctx",
		"m.managed calls m.session",
		"m.managed calls m.Session.save",
		"m.managed calls m.Ctx.push",
		"m.Tx.__enter__ references m.Session",
		"m.use references m.Ctx",
		"m.use references m.Tx",
		"m.use references m.Plain",
		"m.use calls m.Ctx.push",
		"m.use calls m.Session.save",
	})
}

// Python generic classes, hand-derived: a method returning a type variable
// of its class returns the type argument the receiver's class binds in
// its bases (Protocol[T] and Generic[T] declare the parameters; a
// subclass of a subclass finds the binding up its bases). Negative: a
// class between that passes the variable on (Mid(Box[T])) leaves it
// unknown, as does T on a receiver that binds nothing: unresolved.
func TestPythonGenericReturn(t *testing.T) {
	files := map[string]string{
		"m.py": `import typing as t

T = t.TypeVar("T")

class App:
    def run(self): pass

class Proxy(t.Protocol[T]):
    def get(self) -> T: ...

class Box(t.Generic[T]):
    def unwrap(self) -> T: ...

class AppProxy(Proxy[App], App): ...

class AppBox(Box[App]): ...

class MoreBox(AppBox): ...

class Mid(Box[T]): ...

class MidApp(Mid[App]): ...

def use(p: AppProxy, b: MoreBox, m: MidApp, raw: Box):
    p.get().run()
    b.unwrap().run()
    m.unwrap().run()
    raw.unwrap().run()
`,
	}
	checkResolved(t, []string{ingest.LangPython}, files, []string{
		"m.AppProxy implements m.Proxy",
		"m.AppProxy implements m.App",
		"m.AppBox implements m.Box",
		"m.MoreBox implements m.AppBox",
		"m.Mid implements m.Box",
		"m.MidApp implements m.Mid",
		"m.use references m.AppProxy",
		"m.use references m.MoreBox",
		"m.use references m.MidApp",
		"m.use references m.Box",
		"m.use calls m.Proxy.get",
		"m.use calls m.Box.unwrap",
		"m.use calls m.App.run",
	})
	// m.unwrap().run(), raw.unwrap().run().
	checkUnresolved(t, ingest.LangPython, files, 2)
}

// Python methods of standard containers that return an element, as
// typeshed declares them, hand-derived: ContextVar[T].get(), dict[K,
// V].get(k) and .pop(k), list[T].pop(); and the walrus: (x := v) gives x
// the value v. Negative: tuple[A, B] is not a container of one type
// (pair[0].run() unresolved); frozenset has no pop (s.pop().run() is a
// call outside the tree, on the container's method).
func TestPythonContainerMethodsAndWalrus(t *testing.T) {
	files := map[string]string{
		"m.py": `from contextvars import ContextVar

class Ctx:
    def run(self): pass

class Tag:
    def check(self): pass

cv: ContextVar[Ctx] = ContextVar("ctx")

def current():
    if (ctx := cv.get(None)) is not None:
        ctx.run()

def lookups(d: dict[str, Tag], xs: list[Tag], pair: tuple[Ctx, Tag], s: frozenset[Tag]):
    d.get("a").check()
    d.pop("b").check()
    xs.pop().check()
    pair[0].run()
    s.pop().check()
`,
	}
	checkResolved(t, []string{ingest.LangPython}, files, []string{
		"file:m.py references m.Ctx",
		"m.current calls m.Ctx.run",
		"m.lookups references m.Tag",
		"m.lookups references m.Ctx",
		"m.lookups calls m.Tag.check",
	})
	checkUnresolved(t, ingest.LangPython, files, 1)
}

// TypeScript arrays, hand-derived: for (const x of xs) and xs[i] give an
// element of T[], Array<T>, ReadonlyArray<T>, Set<T> (iterated);
// xs["name"] is the property. Negative: for (const k in xs) gives keys
// (k.run() unresolved); the array's own methods (xs.push) are outside the
// tree, not counted.
func TestTypeScriptArrays(t *testing.T) {
	files := map[string]string{
		"a.ts": `export class Job { run(): void {} }
export class Holder { job: Job; }
export function arrays(xs: Job[], ys: Array<Job>, zs: ReadonlyArray<Job>, s: Set<Job>, h: Holder) {
	for (const x of xs) { x.run(); }
	ys[0].run();
	for (const z of zs) { z.run(); }
	for (const e of s) { e.run(); }
	h["job"].run();
	xs.push(new Job());
}
export function keys(xs: Job[]) {
	for (const k in xs) { k.run(); }
}
`,
	}
	checkResolved(t, []string{ingest.LangTypeScript}, files, []string{
		"a.ts#Holder references a.ts#Job",
		"a.ts#arrays references a.ts#Job",
		"a.ts#arrays references a.ts#Holder",
		"a.ts#arrays calls a.ts#Job.run",
		"a.ts#keys references a.ts#Job",
	})
	checkUnresolved(t, ingest.LangTypeScript, files, 1)
}

// TypeScript calls on what calls return, hand-derived: make().where().run()
// and r.q().where() follow return annotations; a call on what an import
// from outside the tree returns leaves the tree (ext().run(), and e.run()
// with e = ext(): not counted). Negative:
// the result of an unknown function (nope().run(): both calls
// unresolved) and of a function without a return annotation (bare().run()).
func TestTypeScriptCallChains(t *testing.T) {
	files := map[string]string{
		"a.ts": `import { ext } from "lib";
export class Q { where(): Q { return this; } run(): void {} }
export function make(): Q { return new Q(); }
export function bare() { return new Q(); }
export class Repo { q(): Q { return new Q(); } }
export function chains(r: Repo) {
	make().where().run();
	r.q().where();
	ext().run();
	const e = ext();
	e.run();
	nope().run();
	bare().run();
}
`,
	}
	checkResolved(t, []string{ingest.LangTypeScript}, files, []string{
		"a.ts#Q.where references a.ts#Q",
		"a.ts#make references a.ts#Q",
		"a.ts#bare references a.ts#Q",
		"a.ts#Repo.q references a.ts#Q",
		"a.ts#chains references a.ts#Repo",
		"a.ts#chains calls a.ts#make",
		"a.ts#chains calls a.ts#bare",
		"a.ts#chains calls a.ts#Q.where",
		"a.ts#chains calls a.ts#Q.run",
		"a.ts#chains calls a.ts#Repo.q",
	})
	checkUnresolved(t, ingest.LangTypeScript, files, 3)
}

// TypeScript member lookup, hand-derived: a class's members are its own,
// then its base's (extends), never those of what it implements; a field
// declared in the class hides a method of that name (logged is a field
// whose function value is not followed: unresolved). new Cold() calls no
// constructor of the implemented Loggable.
func TestTypeScriptMembersNotFromImplements(t *testing.T) {
	files := map[string]string{
		"a.ts": `export class Loggable {
	constructor() {}
	logged(): number { return 1; }
	shared(): number { return 2; }
}
export class Base {
	shared(): number { return 3; }
}
export class Cold extends Base implements Loggable {
	logged: () => number;
	use() {
		this.logged();
		this.shared();
	}
}
export function make(c: Cold) {
	new Cold();
	c.shared();
}
`,
	}
	checkResolved(t, []string{ingest.LangTypeScript}, files, []string{
		"a.ts#Cold implements a.ts#Base",
		"a.ts#Cold implements a.ts#Loggable",
		"a.ts#Cold.use calls a.ts#Base.shared",
		"a.ts#make references a.ts#Cold",
		"a.ts#make calls a.ts#Base.shared",
	})
	checkUnresolved(t, ingest.LangTypeScript, files, 1)
}

// TypeScript functions passed as arguments, hand-derived: an unannotated
// parameter of an arrow or function expression passed to a function,
// method or constructor is what the callee's parameter of function type
// declares ((this: X, s: Sub) => void: this is not a parameter).
// Negative: a parameter the callee types with its type parameter T
// (t.run() unresolved), and one annotated at the callback (its own type).
func TestTypeScriptCallbackParameters(t *testing.T) {
	files := map[string]string{
		"a.ts": `export class Sub { next(): void {} complete(): void {} }
export class Job { run(): void {} }
export class Obs {
	constructor(init?: (this: Obs, s: Sub) => void) {}
	pipe(f: (j: Job, i: number) => void): void {}
}
export function operate<T>(init: (source: T, s: Sub) => void): void {}
export function use(o: Obs) {
	new Obs((s) => s.complete());
	o.pipe(function (j, i) { j.run(); });
	operate((t, s) => { s.next(); t.run(); });
	operate((t, s: Job) => { s.run(); });
}
`,
	}
	checkResolved(t, []string{ingest.LangTypeScript}, files, []string{
		"a.ts#Obs.constructor references a.ts#Obs",
		"a.ts#Obs.constructor references a.ts#Sub",
		"a.ts#Obs.pipe references a.ts#Job",
		"a.ts#operate references a.ts#Sub",
		"a.ts#use references a.ts#Obs",
		"a.ts#use references a.ts#Job",
		"a.ts#use calls a.ts#Obs.constructor",
		"a.ts#use calls a.ts#Sub.complete",
		"a.ts#use calls a.ts#Obs.pipe",
		"a.ts#use calls a.ts#Job.run",
		"a.ts#use calls a.ts#operate",
		"a.ts#use calls a.ts#Sub.next",
	})
	checkUnresolved(t, ingest.LangTypeScript, files, 1)
}
