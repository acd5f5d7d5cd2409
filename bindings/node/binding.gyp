{
  "targets": [{
    "target_name": "hart_node",
    "sources": ["src/addon.cc"],
    "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")",
                     "<!@(pkg-config --variable=includedir hart)"],
    "libraries": ["<!@(pkg-config --libs hart)", "-Wl,-rpath,<!@(pkg-config --variable=libdir hart)"],
    "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS"],
    "cflags_cc": ["-std=c++20"]
  }]
}
