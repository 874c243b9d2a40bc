"""The zoo's third set: four float models in plain torch.nn (no torchvision)
whose layouts the first two sets lack: a DeepLabV3+-style segmenter
(dilated convs, ASPP, bilinear upsampling), Inception-v3's mixed blocks
(four branches, a zero Pad before each average pool), a ConvNeXt (7x7
depthwise convs, LayerNorm and Linear layers on NHWC) and a Swin-style
transformer (shifted windows by Roll, window partition by Reshape and
Transpose). bench/export_zoo.py exports them and describes each.

The tables import without torch (the data step runs under an interpreter
that may lack it); models() imports torch.
"""

# The test input's shape of each model, in export order.
SHAPES = {
    "deeplab_lite": (1, 3, 320, 320),
    "inception_lite": (1, 3, 299, 299),
    "convnext_lite": (1, 3, 224, 224),
    "swin_lite": (1, 3, 224, 224),
}

# The layers rescaled to an output std of 2: the last before each model's
# output.
CALIB_LAYERS = {
    "deeplab_lite": ["dec.1"],
    "inception_lite": ["fc"],
    "convnext_lite": ["head"],
    "swin_lite": ["head"],
}

# Output activations that saturate: none in this set.
CENTER = {}

# torch's thread count per model (output_0.pb can differ in the last bits
# at other counts): one, as the 2-core bench machine is shared.
TORCH_THREADS = {n: 1 for n in SHAPES}


def models():
    """Constructors by name (plain torch.nn, no torchvision)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def he_init(model):
        # As in set 2: under default init deep conv stacks lose their input.
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def cbr(cin, cout, k=3, stride=1, dilation=1):
        return nn.Sequential(
            nn.Conv2d(cin, cout, k, stride, padding=dilation * (k // 2),
                      dilation=dilation, bias=False),
            nn.BatchNorm2d(cout), nn.ReLU())

    # deeplab_lite: DeepLabV3+'s layout on a small ResNet: the last stage
    # dilated (output stride 8), ASPP with rates 6, 12, 18 and image
    # pooling, a decoder on the stride-4 features; bilinear upsampling
    # (half_pixel) 2x to the decoder and 4x to the input's size.
    class Bottleneck(nn.Module):
        def __init__(self, cin, mid, cout, stride=1, dilation=1):
            super().__init__()
            self.body = nn.Sequential(
                cbr(cin, mid, 1), cbr(mid, mid, 3, stride, dilation),
                nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
            self.short = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                        nn.BatchNorm2d(cout))
                          if cin != cout or stride != 1 else nn.Identity())

        def forward(self, x):
            return F.relu(self.body(x) + self.short(x))

    class DeepLabLite(nn.Module):
        def __init__(self, classes=21):
            super().__init__()
            self.stem = nn.Sequential(cbr(3, 32, 3, 2), cbr(32, 32),
                                      nn.MaxPool2d(3, 2, 1))
            self.layer1 = nn.Sequential(Bottleneck(32, 32, 128), Bottleneck(128, 32, 128))
            self.layer2 = nn.Sequential(Bottleneck(128, 64, 256, 2),
                                        Bottleneck(256, 64, 256))
            self.layer3 = nn.Sequential(Bottleneck(256, 96, 384, 1, 2),
                                        Bottleneck(384, 96, 384, 1, 2))
            self.aspp = nn.ModuleList([cbr(384, 128, 1)] +
                                      [cbr(384, 128, 3, 1, r) for r in (6, 12, 18)])
            self.pool = cbr(384, 128, 1)
            self.proj = cbr(640, 128, 1)
            self.low = cbr(128, 48, 1)
            self.dec = nn.Sequential(cbr(176, 128), nn.Conv2d(128, classes, 1))
            he_init(self)

        def forward(self, x):                                   # [1,3,320,320]
            size = x.shape[2:]
            low = self.layer1(self.stem(x))                     # [1,128,80,80]
            y = self.layer3(self.layer2(low))                   # [1,384,40,40]
            p = F.interpolate(self.pool(F.adaptive_avg_pool2d(y, 1)), size=y.shape[2:],
                              mode="bilinear", align_corners=False)
            y = self.proj(torch.cat([m(y) for m in self.aspp] + [p], 1))
            y = F.interpolate(y, size=low.shape[2:], mode="bilinear", align_corners=False)
            y = self.dec(torch.cat([y, self.low(low)], 1))      # [1,21,80,80]
            return F.interpolate(y, size=size, mode="bilinear", align_corners=False)

    # inception_lite: Inception-v3's stem and its first mixed blocks (1x1,
    # 5x5 as two 3x3, 3x3 and average-pool branches concatenated; the pool's
    # padding exported as a zero Pad), a global average and a classifier.
    class Mixed(nn.Module):
        def __init__(self, cin, a, b1, b2, c1, c2, d):
            super().__init__()
            self.a = cbr(cin, a, 1)
            self.b = nn.Sequential(cbr(cin, b1, 1), cbr(b1, b2, 3))
            self.c = nn.Sequential(cbr(cin, c1, 1), cbr(c1, c2, 3), cbr(c2, c2, 3))
            self.d = nn.Sequential(nn.AvgPool2d(3, 1, 1), cbr(cin, d, 1))

        def forward(self, x):
            return torch.cat([self.a(x), self.b(x), self.c(x), self.d(x)], 1)

    class InceptionLite(nn.Module):
        def __init__(self, classes=1000):
            super().__init__()
            self.features = nn.Sequential(
                cbr(3, 32, 3, 2), cbr(32, 32), cbr(32, 64), nn.MaxPool2d(3, 2),
                cbr(64, 80, 1), cbr(80, 192, 3), nn.MaxPool2d(3, 2),
                Mixed(192, 64, 48, 64, 64, 96, 32), Mixed(256, 64, 48, 64, 64, 96, 64),
                nn.MaxPool2d(3, 2), Mixed(288, 128, 96, 128, 96, 128, 128),
                Mixed(512, 128, 96, 160, 96, 160, 128))
            self.fc = nn.Linear(576, classes)
            he_init(self)

        def forward(self, x):                                   # [1,3,299,299]
            return self.fc(self.features(x).mean((2, 3)))

    # convnext_lite: ConvNeXt's blocks (7x7 depthwise, LayerNorm and the
    # 4x MLP on NHWC, layer scale) at widths 48 to 384, depths 2, 2, 4, 2.
    class LayerNorm2d(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.ln = nn.LayerNorm(c)

        def forward(self, x):
            return self.ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    class ConvNeXtBlock(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
            self.ln = nn.LayerNorm(c)
            self.fc1 = nn.Linear(c, 4 * c)
            self.fc2 = nn.Linear(4 * c, c)
            self.gamma = nn.Parameter(torch.full((c,), 0.5))

        def forward(self, x):
            y = self.dw(x).permute(0, 2, 3, 1)
            y = self.fc2(F.gelu(self.fc1(self.ln(y))))
            return x + (self.gamma * y).permute(0, 3, 1, 2)

    class ConvNeXtLite(nn.Module):
        def __init__(self, dims=(48, 96, 192, 384), depths=(2, 2, 4, 2), classes=1000):
            super().__init__()
            layers = [nn.Conv2d(3, dims[0], 4, 4), LayerNorm2d(dims[0])]
            for i, (c, n) in enumerate(zip(dims, depths)):
                if i:
                    layers += [LayerNorm2d(dims[i - 1]), nn.Conv2d(dims[i - 1], c, 2, 2)]
                layers += [ConvNeXtBlock(c) for _ in range(n)]
            self.features = nn.Sequential(*layers)
            self.norm = nn.LayerNorm(dims[-1])
            self.head = nn.Linear(dims[-1], classes)

        def forward(self, x):                                   # [1,3,224,224]
            return self.head(self.norm(self.features(x).mean((2, 3))))

    # swin_lite: Swin-T's first stage (width 96, 3 heads, 7x7 windows) for
    # four blocks, every other one shifted by 3 (Roll), on the 56x56 patch
    # grid; mean over the grid, a classifier.
    class SwinBlock(nn.Module):
        def __init__(self, c=96, heads=3, window=7, shift=0):
            super().__init__()
            self.heads, self.window, self.shift = heads, window, shift
            self.ln1 = nn.LayerNorm(c)
            self.qkv = nn.Linear(c, 3 * c)
            self.proj = nn.Linear(c, c)
            self.ln2 = nn.LayerNorm(c)
            self.mlp = nn.Sequential(nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c))

        def forward(self, x):                                   # [B,H,W,C]
            b, h, w, c = x.shape
            ws, s = self.window, self.shift
            y = self.ln1(x)
            if s:
                y = torch.roll(y, (-s, -s), (1, 2))
            y = y.view(b, h // ws, ws, w // ws, ws, c).permute(0, 1, 3, 2, 4, 5)
            y = y.reshape(-1, ws * ws, c)
            q, k, v = self.qkv(y).reshape(y.shape[0], ws * ws, 3, self.heads,
                                          c // self.heads).permute(2, 0, 3, 1, 4)
            a = (q @ k.transpose(-2, -1)) * (c // self.heads) ** -0.5
            y = (a.softmax(-1) @ v).transpose(1, 2).reshape(-1, ws * ws, c)
            y = self.proj(y).view(b, h // ws, w // ws, ws, ws, c).permute(0, 1, 3, 2, 4, 5)
            y = y.reshape(b, h, w, c)
            if s:
                y = torch.roll(y, (s, s), (1, 2))
            x = x + y
            return x + self.mlp(self.ln2(x))

    class SwinLite(nn.Module):
        def __init__(self, classes=1000):
            super().__init__()
            self.patch = nn.Conv2d(3, 96, 4, 4)
            self.blocks = nn.Sequential(*[SwinBlock(shift=3 * (i % 2)) for i in range(4)])
            self.head = nn.Linear(96, classes)

        def forward(self, x):                                   # [1,3,224,224]
            y = self.blocks(self.patch(x).permute(0, 2, 3, 1))  # [1,56,56,96]
            return self.head(y.mean((1, 2)))

    return {
        "deeplab_lite": DeepLabLite,
        "inception_lite": InceptionLite,
        "convnext_lite": ConvNeXtLite,
        "swin_lite": SwinLite,
    }
