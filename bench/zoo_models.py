"""The zoo's first set: ten third-party-style float models in plain torch.nn
(no torchvision), the ones that showed kiln's first performance cliffs.
bench/export_zoo.py exports them and describes each.

The tables import without torch (the data step runs under an interpreter
that may lack it); models() imports torch.
"""

# The test input's shape of each model, in export order.
SHAPES = {
    "mobilenet_v3_small": (1, 3, 224, 224),
    "shufflenet_v2_x1_0": (1, 3, 224, 224),
    "ocr_det": (1, 3, 320, 320),
    "crnn_rec": (1, 3, 48, 320),
    "unet_seg": (1, 3, 256, 256),
    "effnet_b0_lite": (1, 3, 224, 224),
    "yolo_lite": (1, 3, 320, 320),
    "vit_tiny": (1, 3, 224, 224),
    "conformer_lite": (1, 200, 80),
    "vocoder_lite": (1, 80, 50),
}

# The layers rescaled to an output std of 2: the last before each model's
# output activation (yolo_lite's three detect convs).
CALIB_LAYERS = {
    "mobilenet_v3_small": ["classifier.3"],
    "shufflenet_v2_x1_0": ["fc"],
    "ocr_det": ["head.6"],
    "crnn_rec": ["fc"],
    "unet_seg": ["head"],
    "effnet_b0_lite": ["classifier"],
    "yolo_lite": ["det.0", "det.1", "det.2"],
    "vit_tiny": ["head"],
    "conformer_lite": ["out"],
    "vocoder_lite": ["post"],
}

# Output activations that saturate (tanh): this std instead of 2, and the
# bias shifted to a zero-mean pre-activation.
CENTER = {"vocoder_lite": 1.5}

# torch's thread count per model: the zoo's output_0.pb files were made at
# these counts, and at others torch's outputs can differ in the last bits
# (unet_seg, effnet_b0_lite and yolo_lite do at 1).
TORCH_THREADS = {
    **{n: 1 for n in ["mobilenet_v3_small", "shufflenet_v2_x1_0", "ocr_det", "crnn_rec"]},
    **{n: 2 for n in ["unet_seg", "effnet_b0_lite", "yolo_lite", "vit_tiny",
                      "conformer_lite", "vocoder_lite"]},
}


def models():
    """Constructors by name (plain torch.nn, no torchvision)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    # mobilenet_v3_small: torchvision's MobileNetV3-Small.
    def make_divisible(v, divisor=8, min_value=None):
        if min_value is None:
            min_value = divisor
        new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
        if new_v < 0.9 * v:
            new_v += divisor
        return new_v

    def conv_bn_act(cin, cout, k, stride=1, groups=1, act=None, eps=1e-3):
        layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
                  nn.BatchNorm2d(cout, eps=eps, momentum=0.01)]
        if act is not None:
            layers.append(act(inplace=True))
        return nn.Sequential(*layers)

    class SqueezeExcitation(nn.Module):
        def __init__(self, cin, csq):
            super().__init__()
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc1 = nn.Conv2d(cin, csq, 1)
            self.fc2 = nn.Conv2d(csq, cin, 1)
            self.activation = nn.ReLU()
            self.scale_activation = nn.Hardsigmoid()

        def forward(self, x):
            s = self.avgpool(x)
            s = self.activation(self.fc1(s))
            s = self.scale_activation(self.fc2(s))
            return s * x

    class MBV3Block(nn.Module):
        def __init__(self, cin, k, cexp, cout, use_se, act, stride):
            super().__init__()
            self.use_res = stride == 1 and cin == cout
            A = nn.Hardswish if act == "HS" else nn.ReLU
            layers = []
            if cexp != cin:
                layers.append(conv_bn_act(cin, cexp, 1, act=A))
            layers.append(conv_bn_act(cexp, cexp, k, stride, groups=cexp, act=A))
            if use_se:
                layers.append(SqueezeExcitation(cexp, make_divisible(cexp // 4, 8)))
            layers.append(conv_bn_act(cexp, cout, 1, act=None))
            self.block = nn.Sequential(*layers)

        def forward(self, x):
            y = self.block(x)
            return y + x if self.use_res else y

    class MobileNetV3Small(nn.Module):
        def __init__(self, num_classes=1000):
            super().__init__()
            cfg = [  # cin, k, exp, cout, se, act, stride
                (16, 3, 16, 16, True, "RE", 2),
                (16, 3, 72, 24, False, "RE", 2),
                (24, 3, 88, 24, False, "RE", 1),
                (24, 5, 96, 40, True, "HS", 2),
                (40, 5, 240, 40, True, "HS", 1),
                (40, 5, 240, 40, True, "HS", 1),
                (40, 5, 120, 48, True, "HS", 1),
                (48, 5, 144, 48, True, "HS", 1),
                (48, 5, 288, 96, True, "HS", 2),
                (96, 5, 576, 96, True, "HS", 1),
                (96, 5, 576, 96, True, "HS", 1),
            ]
            layers = [conv_bn_act(3, 16, 3, 2, act=nn.Hardswish)]
            layers += [MBV3Block(*c) for c in cfg]
            layers.append(conv_bn_act(96, 576, 1, act=nn.Hardswish))
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Sequential(
                nn.Linear(576, 1024), nn.Hardswish(inplace=True), nn.Dropout(0.2, inplace=True),
                nn.Linear(1024, num_classes))

        def forward(self, x):
            x = self.avgpool(self.features(x))
            return self.classifier(torch.flatten(x, 1))

    # shufflenet_v2_x1_0: torchvision's ShuffleNetV2 x1.0.
    def channel_shuffle(x, groups):
        b, c, h, w = x.size()
        x = x.view(b, groups, c // groups, h, w)
        x = torch.transpose(x, 1, 2).contiguous()
        return x.view(b, -1, h, w)

    class ShuffleBlock(nn.Module):
        def __init__(self, inp, oup, stride):
            super().__init__()
            self.stride = stride
            bf = oup // 2
            if stride > 1:
                self.branch1 = nn.Sequential(
                    nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False), nn.BatchNorm2d(inp),
                    nn.Conv2d(inp, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU(inplace=True))
            else:
                self.branch1 = nn.Sequential()
            self.branch2 = nn.Sequential(
                nn.Conv2d(inp if stride > 1 else bf, bf, 1, bias=False), nn.BatchNorm2d(bf),
                nn.ReLU(inplace=True),
                nn.Conv2d(bf, bf, 3, stride, 1, groups=bf, bias=False), nn.BatchNorm2d(bf),
                nn.Conv2d(bf, bf, 1, bias=False), nn.BatchNorm2d(bf), nn.ReLU(inplace=True))

        def forward(self, x):
            if self.stride == 1:
                x1, x2 = x.chunk(2, dim=1)
                out = torch.cat((x1, self.branch2(x2)), dim=1)
            else:
                out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
            return channel_shuffle(out, 2)

    class ShuffleNetV2(nn.Module):
        def __init__(self, repeats=(4, 8, 4), chans=(24, 116, 232, 464, 1024), num_classes=1000):
            super().__init__()
            cin = 3
            cout = chans[0]
            self.conv1 = nn.Sequential(nn.Conv2d(cin, cout, 3, 2, 1, bias=False),
                                       nn.BatchNorm2d(cout), nn.ReLU(inplace=True))
            cin = cout
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            stages = []
            for r, cout in zip(repeats, chans[1:4]):
                blocks = [ShuffleBlock(cin, cout, 2)] + \
                    [ShuffleBlock(cout, cout, 1) for _ in range(r - 1)]
                stages.append(nn.Sequential(*blocks))
                cin = cout
            self.stage2, self.stage3, self.stage4 = stages
            self.conv5 = nn.Sequential(nn.Conv2d(cin, chans[-1], 1, bias=False),
                                       nn.BatchNorm2d(chans[-1]), nn.ReLU(inplace=True))
            self.fc = nn.Linear(chans[-1], num_classes)

        def forward(self, x):
            x = self.maxpool(self.conv1(x))
            x = self.stage4(self.stage3(self.stage2(x)))
            x = self.conv5(x).mean([2, 3])
            return self.fc(x)

    # ocr_det: a DBNet-like text detector.
    def cbr(cin, cout, k=3, s=1, groups=1):
        return nn.Sequential(nn.Conv2d(cin, cout, k, s, (k - 1) // 2, groups=groups, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    def dwsep(cin, cout, s=1):
        return nn.Sequential(cbr(cin, cin, 3, s, groups=cin), cbr(cin, cout, 1))

    class OcrDet(nn.Module):
        def __init__(self):
            super().__init__()
            # backbone: strides 4, 8, 16, 32 ; channels 16, 24, 56, 96
            self.stage1 = nn.Sequential(cbr(3, 16, 3, 2), cbr(16, 16, 3, 1), dwsep(16, 16, 2))
            self.stage2 = nn.Sequential(dwsep(16, 24, 2), dwsep(24, 24, 1))
            self.stage3 = nn.Sequential(dwsep(24, 56, 2), dwsep(56, 56, 1), dwsep(56, 56, 1))
            self.stage4 = nn.Sequential(dwsep(56, 96, 2), dwsep(96, 96, 1))
            # FPN neck
            self.in2, self.in3 = nn.Conv2d(16, 64, 1), nn.Conv2d(24, 64, 1)
            self.in4, self.in5 = nn.Conv2d(56, 64, 1), nn.Conv2d(96, 64, 1)
            self.up2 = nn.Upsample(scale_factor=2, mode="nearest")
            self.p2, self.p3 = nn.Conv2d(64, 64, 3, 1, 1), nn.Conv2d(64, 64, 3, 1, 1)
            self.p4, self.p5 = nn.Conv2d(64, 64, 3, 1, 1), nn.Conv2d(64, 64, 3, 1, 1)
            self.up4 = nn.Upsample(scale_factor=4, mode="nearest")
            self.up8 = nn.Upsample(scale_factor=8, mode="nearest")
            # head
            self.head = nn.Sequential(
                nn.Conv2d(256, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                nn.ConvTranspose2d(64, 64, 2, 2), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                nn.ConvTranspose2d(64, 1, 2, 2), nn.Sigmoid())

        def forward(self, x):
            c2 = self.stage1(x)
            c3 = self.stage2(c2)
            c4 = self.stage3(c3)
            c5 = self.stage4(c4)
            in5 = self.in5(c5)
            out4 = self.in4(c4) + self.up2(in5)
            out3 = self.in3(c3) + self.up2(out4)
            out2 = self.in2(c2) + self.up2(out3)
            p5 = self.up8(self.p5(in5))
            p4 = self.up4(self.p4(out4))
            p3 = self.up2(self.p3(out3))
            p2 = self.p2(out2)
            fuse = torch.cat([p5, p4, p3, p2], dim=1)
            return self.head(fuse)

    # crnn_rec: a CRNN text recognizer.
    class CrnnRec(nn.Module):
        def __init__(self, num_classes=97, hidden=96):
            super().__init__()
            self.cnn = nn.Sequential(
                cbr(3, 32), nn.MaxPool2d((2, 2), (2, 2)),      # 24 x 160
                cbr(32, 64), nn.MaxPool2d((2, 2), (2, 2)),     # 12 x 80
                cbr(64, 128), nn.MaxPool2d((2, 1), (2, 1)),    # 6 x 80
                cbr(128, 256), nn.MaxPool2d((2, 1), (2, 1)),   # 3 x 80
                nn.MaxPool2d((3, 1), (3, 1)))                  # 1 x 80
            self.rnn = nn.LSTM(256, hidden, num_layers=2, bidirectional=True)
            self.fc = nn.Linear(2 * hidden, num_classes)

        def forward(self, x):
            f = self.cnn(x)               # [1, 256, 1, 80]
            f = f.squeeze(2)              # [1, 256, 80]
            f = f.permute(2, 0, 1)        # [80, 1, 256]
            y, _ = self.rnn(f)            # [80, 1, 192]
            y = self.fc(y)                # [80, 1, 97]
            return torch.softmax(y, dim=2)

    # unet_seg: a UNet.
    def double_conv(cin, cout):
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self, cin=3, ncls=4, ch=(16, 32, 64, 128), cb=256):
            super().__init__()
            self.enc1 = double_conv(cin, ch[0])       # 256
            self.enc2 = double_conv(ch[0], ch[1])     # 128
            self.enc3 = double_conv(ch[1], ch[2])     # 64
            self.enc4 = double_conv(ch[2], ch[3])     # 32
            self.pool = nn.MaxPool2d(2, 2)
            self.bottleneck = double_conv(ch[3], cb)  # 16
            # up-sampling: k2 s2 at levels 4 and 2, k4 s2 p1 at levels 3 and 1
            self.up4 = nn.ConvTranspose2d(cb, ch[3], 2, 2)
            self.dec4 = double_conv(2 * ch[3], ch[3])
            self.up3 = nn.ConvTranspose2d(ch[3], ch[2], 4, 2, 1)
            self.dec3 = double_conv(2 * ch[2], ch[2])
            self.up2 = nn.ConvTranspose2d(ch[2], ch[1], 2, 2)
            self.dec2 = double_conv(2 * ch[1], ch[1])
            self.up1 = nn.ConvTranspose2d(ch[1], ch[0], 4, 2, 1)
            self.dec1 = double_conv(2 * ch[0], ch[0])
            self.head = nn.Conv2d(ch[0], ncls, 1)

        def forward(self, x):
            e1 = self.enc1(x)
            e2 = self.enc2(self.pool(e1))
            e3 = self.enc3(self.pool(e2))
            e4 = self.enc4(self.pool(e3))
            b = self.bottleneck(self.pool(e4))
            d4 = self.dec4(torch.cat([self.up4(b), e4], 1))
            d3 = self.dec3(torch.cat([self.up3(d4), e3], 1))
            d2 = self.dec2(torch.cat([self.up2(d3), e2], 1))
            d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
            return torch.softmax(self.head(d1), dim=1)

    # effnet_b0_lite: EfficientNet-B0's stages.
    def cbs(cin, cout, k, s=1, groups=1, act=True):
        layers = [nn.Conv2d(cin, cout, k, s, (k - 1) // 2, groups=groups, bias=False),
                  nn.BatchNorm2d(cout, eps=1e-3)]
        if act:
            layers.append(nn.SiLU(inplace=True))
        return nn.Sequential(*layers)

    class SE(nn.Module):
        def __init__(self, c, csq):
            super().__init__()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc1 = nn.Conv2d(c, csq, 1)
            self.fc2 = nn.Conv2d(csq, c, 1)
            self.act = nn.SiLU(inplace=True)
            self.gate = nn.Sigmoid()

        def forward(self, x):
            s = self.gate(self.fc2(self.act(self.fc1(self.pool(x)))))
            return x * s

    class MBConv(nn.Module):
        def __init__(self, cin, cout, k, s, expand):
            super().__init__()
            cexp = cin * expand
            self.use_res = s == 1 and cin == cout
            layers = []
            if expand != 1:
                layers.append(cbs(cin, cexp, 1))
            layers.append(cbs(cexp, cexp, k, s, groups=cexp))
            layers.append(SE(cexp, max(1, cin // 4)))
            layers.append(cbs(cexp, cout, 1, act=False))
            self.block = nn.Sequential(*layers)

        def forward(self, x):
            y = self.block(x)
            return y + x if self.use_res else y

    class EffNetB0(nn.Module):
        # (expand, channels, repeats, stride, kernel)
        CFG = [(1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3),
               (6, 112, 3, 1, 5), (6, 192, 4, 2, 5), (6, 320, 1, 1, 3)]

        def __init__(self, num_classes=1000):
            super().__init__()
            layers = [cbs(3, 32, 3, 2)]
            cin = 32
            for e, c, n, s, k in self.CFG:
                for i in range(n):
                    layers.append(MBConv(cin, c, k, s if i == 0 else 1, e))
                    cin = c
            layers.append(cbs(cin, 1280, 1))
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.dropout = nn.Dropout(0.2)
            self.classifier = nn.Linear(1280, num_classes)

        def forward(self, x):
            x = self.avgpool(self.features(x))
            return self.classifier(self.dropout(torch.flatten(x, 1)))

    # yolo_lite: YOLOv5n's layout.
    class Conv(nn.Module):
        def __init__(self, c1, c2, k=1, s=1, p=None):
            super().__init__()
            self.conv = nn.Conv2d(c1, c2, k, s, k // 2 if p is None else p, bias=False)
            self.bn = nn.BatchNorm2d(c2, eps=1e-3, momentum=0.03)
            self.act = nn.SiLU(inplace=True)

        def forward(self, x):
            return self.act(self.bn(self.conv(x)))

    class Bottleneck(nn.Module):
        def __init__(self, c1, c2, shortcut=True):
            super().__init__()
            self.cv1 = Conv(c1, c2, 1)
            self.cv2 = Conv(c2, c2, 3)
            self.add = shortcut and c1 == c2

        def forward(self, x):
            y = self.cv2(self.cv1(x))
            return x + y if self.add else y

    class C3(nn.Module):
        def __init__(self, c1, c2, n=1, shortcut=True):
            super().__init__()
            c_ = c2 // 2
            self.cv1 = Conv(c1, c_, 1)
            self.cv2 = Conv(c1, c_, 1)
            self.cv3 = Conv(2 * c_, c2, 1)
            self.m = nn.Sequential(*[Bottleneck(c_, c_, shortcut) for _ in range(n)])

        def forward(self, x):
            return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], 1))

    class SPPF(nn.Module):
        def __init__(self, c1, c2, k=5):
            super().__init__()
            c_ = c1 // 2
            self.cv1 = Conv(c1, c_, 1)
            self.cv2 = Conv(4 * c_, c2, 1)
            self.m = nn.MaxPool2d(k, 1, k // 2)

        def forward(self, x):
            x = self.cv1(x)
            y1 = self.m(x)
            y2 = self.m(y1)
            y3 = self.m(y2)
            return self.cv2(torch.cat([x, y1, y2, y3], 1))

    class YoloLite(nn.Module):
        def __init__(self, nc=80, na=3, img=320):
            super().__init__()
            self.no, self.na = nc + 5, na
            # backbone
            self.b0 = Conv(3, 16, 6, 2, 2)        # /2
            self.b1 = Conv(16, 32, 3, 2)          # /4
            self.b2 = C3(32, 32, 1)
            self.b3 = Conv(32, 64, 3, 2)          # /8
            self.b4 = C3(64, 64, 2)
            self.b5 = Conv(64, 128, 3, 2)         # /16
            self.b6 = C3(128, 128, 3)
            self.b7 = Conv(128, 256, 3, 2)        # /32
            self.b8 = C3(256, 256, 1)
            self.b9 = SPPF(256, 256, 5)
            # PAN neck
            self.h10 = Conv(256, 128, 1)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.h13 = C3(256, 128, 1, False)
            self.h14 = Conv(128, 64, 1)
            self.h17 = C3(128, 64, 1, False)      # P3 out (/8)
            self.h18 = Conv(64, 64, 3, 2)
            self.h20 = C3(128, 128, 1, False)     # P4 out (/16)
            self.h21 = Conv(128, 128, 3, 2)
            self.h23 = C3(256, 256, 1, False)     # P5 out (/32)
            # detect
            self.det = nn.ModuleList(nn.Conv2d(c, na * self.no, 1) for c in (64, 128, 256))
            self.grids = [(img // s, img // s) for s in (8, 16, 32)]

        def forward(self, x):
            x = self.b2(self.b1(self.b0(x)))
            p3 = self.b4(self.b3(x))
            p4 = self.b6(self.b5(p3))
            x = self.b9(self.b8(self.b7(p4)))
            x10 = self.h10(x)
            x = self.h13(torch.cat([self.up(x10), p4], 1))
            x14 = self.h14(x)
            o3 = self.h17(torch.cat([self.up(x14), p3], 1))
            o4 = self.h20(torch.cat([self.h18(o3), x14], 1))
            o5 = self.h23(torch.cat([self.h21(o4), x10], 1))
            outs = []
            for conv, f, (h, w) in zip(self.det, (o3, o4, o5), self.grids):
                y = conv(f).view(1, self.na, self.no, h, w).permute(0, 1, 3, 4, 2).contiguous()
                outs.append(y.view(1, -1, self.no))
            return torch.sigmoid(torch.cat(outs, 1))

    # vit_tiny: ViT-Tiny's width, 4 layers.
    class Attention(nn.Module):
        def __init__(self, dim, heads, tokens):
            super().__init__()
            self.h, self.dh, self.n = heads, dim // heads, tokens
            self.q = nn.Linear(dim, dim)
            self.k = nn.Linear(dim, dim)
            self.v = nn.Linear(dim, dim)
            self.proj = nn.Linear(dim, dim)
            self.scale = 1.0 / math.sqrt(self.dh)

        def forward(self, x):
            n, h, dh = self.n, self.h, self.dh
            q = self.q(x).view(1, n, h, dh).permute(0, 2, 1, 3)    # [1,h,n,dh]
            k = self.k(x).view(1, n, h, dh).permute(0, 2, 3, 1)    # [1,h,dh,n]
            v = self.v(x).view(1, n, h, dh).permute(0, 2, 1, 3)    # [1,h,n,dh]
            a = torch.softmax(torch.matmul(q, k) * self.scale, dim=-1)
            o = torch.matmul(a, v).permute(0, 2, 1, 3).contiguous().view(1, n, h * dh)
            return self.proj(o)

    class EncoderLayer(nn.Module):
        def __init__(self, dim, heads, mlp, tokens):
            super().__init__()
            self.ln1 = nn.LayerNorm(dim, eps=1e-6)
            self.attn = Attention(dim, heads, tokens)
            self.ln2 = nn.LayerNorm(dim, eps=1e-6)
            self.mlp = nn.Sequential(nn.Linear(dim, mlp), nn.GELU(), nn.Linear(mlp, dim))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class ViTTiny(nn.Module):
        def __init__(self, img=224, patch=16, dim=192, depth=4, heads=3, mlp=768,
                     num_classes=1000):
            super().__init__()
            tokens = (img // patch) ** 2 + 1
            self.dim, self.tokens = dim, tokens
            self.patch_embed = nn.Conv2d(3, dim, patch, patch)
            self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
            self.pos_embed = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
            self.blocks = nn.Sequential(*[EncoderLayer(dim, heads, mlp, tokens)
                                          for _ in range(depth)])
            self.norm = nn.LayerNorm(dim, eps=1e-6)
            self.head = nn.Linear(dim, num_classes)

        def forward(self, x):
            x = self.patch_embed(x)                                # [1,192,14,14]
            x = x.view(1, self.dim, self.tokens - 1).transpose(1, 2)  # [1,196,192] constant shape
            x = torch.cat([self.cls_token, x], 1) + self.pos_embed  # [1,197,192]
            x = self.norm(self.blocks(x))
            return self.head(x[:, 0])

    # conformer_lite: conv subsampling, conformer-style blocks, an LSTM.
    class FeedForward(nn.Module):
        def __init__(self, d, dff):
            super().__init__()
            self.ln = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, dff)
            self.act = nn.SiLU()
            self.fc2 = nn.Linear(dff, d)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(self.ln(x))))

    class ConvModule(nn.Module):
        def __init__(self, d, k=15):
            super().__init__()
            self.ln = nn.LayerNorm(d)
            self.pw1 = nn.Conv1d(d, 2 * d, 1)
            self.glu = nn.GLU(dim=1)
            self.dw = nn.Conv1d(d, d, k, 1, (k - 1) // 2, groups=d)
            self.bn = nn.BatchNorm1d(d)
            self.act = nn.SiLU()
            self.pw2 = nn.Conv1d(d, d, 1)

        def forward(self, x):                              # [1,T,d]
            y = self.ln(x).transpose(1, 2)                 # [1,d,T]
            y = self.glu(self.pw1(y))
            y = self.act(self.bn(self.dw(y)))
            return self.pw2(y).transpose(1, 2)

    class ConformerLite(nn.Module):
        def __init__(self, frames=200, mels=80, d=144, nblocks=2, vocab=500):
            super().__init__()
            self.sub = nn.Sequential(nn.Conv2d(1, 64, 3, 2), nn.ReLU(),
                                     nn.Conv2d(64, 64, 3, 2), nn.ReLU())
            self.t = ((frames - 1) // 2 - 1) // 2          # 49
            self.f = ((mels - 1) // 2 - 1) // 2            # 19
            self.proj = nn.Linear(64 * self.f, d)
            self.ff = nn.ModuleList(FeedForward(d, 4 * d) for _ in range(nblocks))
            self.conv = nn.ModuleList(ConvModule(d) for _ in range(nblocks))
            self.lstm = nn.LSTM(d, d, num_layers=1, batch_first=True)
            # initial LSTM state as buffers: torch.zeros() created in forward() (or hx=None) is
            # exported by torch 1.13 as Shape/Gather/Concat/Expand of the input's batch dim
            self.register_buffer("h0", torch.zeros(1, 1, d))
            self.register_buffer("c0", torch.zeros(1, 1, d))
            self.out = nn.Linear(d, vocab)

        def forward(self, x):                              # [1,200,80]
            x = self.sub(x.unsqueeze(1))                   # [1,64,49,19]
            x = x.permute(0, 2, 1, 3).contiguous().view(1, self.t, 64 * self.f)
            x = self.proj(x)                               # [1,49,144]
            for ff, conv in zip(self.ff, self.conv):
                x = x + 0.5 * ff(x)
                x = x + conv(x)
            x, _ = self.lstm(x, (self.h0, self.c0))
            return torch.log_softmax(self.out(x), dim=-1)  # [1,49,500]

    # vocoder_lite: a HiFi-GAN-like vocoder.
    class ResBlock(nn.Module):
        def __init__(self, c, k=3, dil=(1, 3)):
            super().__init__()
            self.convs = nn.ModuleList(nn.Conv1d(c, c, k, 1, d * (k - 1) // 2, dilation=d)
                                       for d in dil)      # explicit 'same' padding

        def forward(self, x):
            y = x
            for c in self.convs:
                y = c(F.leaky_relu(y, 0.1))
            return x + y

    class VocoderLite(nn.Module):
        def __init__(self, mels=80, c0=128, strides=(8, 8, 4)):
            super().__init__()
            self.pre = nn.Conv1d(mels, c0, 7, 1, 3)
            ups, res = [], []
            c = c0
            for s in strides:
                ups.append(nn.ConvTranspose1d(c, c // 2, 2 * s, s, s // 2))
                c //= 2
                res.append(ResBlock(c))
            self.ups, self.res = nn.ModuleList(ups), nn.ModuleList(res)
            self.post = nn.Conv1d(c, 1, 7, 1, 3)

        def forward(self, x):
            x = self.pre(x)
            for up, rb in zip(self.ups, self.res):
                x = rb(up(F.leaky_relu(x, 0.1)))
            return torch.tanh(self.post(x))

    return {
        "mobilenet_v3_small": MobileNetV3Small,
        "shufflenet_v2_x1_0": ShuffleNetV2,
        "ocr_det": OcrDet,
        "crnn_rec": CrnnRec,
        "unet_seg": UNet,
        "effnet_b0_lite": EffNetB0,
        "yolo_lite": YoloLite,
        "vit_tiny": ViTTiny,
        "conformer_lite": ConformerLite,
        "vocoder_lite": VocoderLite,
    }
