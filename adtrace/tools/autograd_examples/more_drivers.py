"""More of autograd's examples, beyond those issue 17 names: independent component analysis, a GP
latent-variable model, a function of its own RKHS vector space, mixture and Bayesian-network
variational inference, regression, a user-defined gradient, an HMM, gammaln, a GAN."""

import autograd.numpy as np
import autograd.numpy.random as npr

from .load import module
from .registry import example


def ica_args():
    ica, rs = module("ica"), npr.RandomState(0)
    num_weights, sample, _, _ = ica.make_ica_funs(observed_dimension=4, latent_dimension=2)
    true_weights = np.sin(np.outer(np.linspace(0, 4, 4), [1.0, 1.8]))
    _, data = sample(true_weights, 5, 1.0, rs)
    return (npr.RandomState(0).randn(num_weights + 2 * 5 + 1), data), {}


@example("ica", ica_args)
def ica(params, data):
    """the objective of its ``__main__``: -logprob of the unpacked weights, latents and noise / n"""
    ica = module("ica")
    num_weights, _, logprob, unpack_weights = ica.make_ica_funs(observed_dimension=4, latent_dimension=2)
    weights = unpack_weights(params[:num_weights])
    latents = np.reshape(params[num_weights:num_weights + 10], (2, 5))
    return -logprob(weights, latents, np.exp(params[-1]), data) / 5


def gplvm_args():
    data = module("data").make_pinwheel(radial_std=0.3, tangential_std=0.05, num_classes=3, num_per_class=2,
                                        rate=0.4, rs=npr.RandomState(0))
    return (npr.RandomState(1).randn(2 * 5 + 6 * 2) * 0.1, data), {}


@example("gplvm", gplvm_args)
def gplvm(params, data):
    """the objective of its ``__main__``: a GP per data dimension over latent points, and their prior"""
    gp = module("gplvm")
    log_marginal_likelihood = gp.make_gp_funs(gp.rbf_covariance, num_cov_params=3)[2]
    gp_params, latents = np.reshape(params[:10], (2, 5)), np.reshape(params[10:], (6, 2))
    gp_likelihood = sum([log_marginal_likelihood(gp_params[i], latents, data[:, i]) for i in range(2)])
    return -gp_likelihood - np.sum(gp.norm.logpdf(latents))


def _sq_exp_kernel(x1, x2):
    """The kernel of rkhs.py's ``__main__``."""
    return np.exp(-((x1 - x2) ** 2))


def rkhs_args():
    rkhs = module("rkhs")
    return (rkhs.RKHSFun(_sq_exp_kernel, {0.0: 0.5, 2.0: -0.25}), [0, 1, 2], [1.0, 2.0, 3.0]), {}


@example("rkhs", rkhs_args)
def rkhs(f, xs, ys):
    """logprob of a function of its own RKHS vector space (a registered VSpace)"""
    return -sum((f(x) - y) ** 2 for x, y in zip(xs, ys))


def _two_bumps_log_density(x, t):
    """The unnormalized log-density mixture_variational_inference's ``__main__`` fits."""
    norm = module("mixture_variational_inference").norm
    mu, log_sigma = x[:, 0], x[:, 1]
    first = norm.logpdf(log_sigma, 0, 1.35) + norm.logpdf(mu, -0.5, np.exp(log_sigma))
    second = norm.logpdf(log_sigma, 0.1, 1.35) + norm.logpdf(mu, 0.5, np.exp(log_sigma))
    return np.logaddexp(first, second)


def mixture_variational_inference_args():
    init_var_params = module("mixture_variational_inference").build_mog_bbsvi(
        _two_bumps_log_density, num_samples=3, k=2)[0]
    return (init_var_params(2, rs=npr.RandomState(0)), 0), {}


@example("mixture_variational_inference", mixture_variational_inference_args)
def mixture_variational_inference(params, t):
    """-mixture_elbo of a 2-component mixture, built anew per call (its sampler is seeded once)"""
    elbo = module("mixture_variational_inference").build_mog_bbsvi(
        _two_bumps_log_density, num_samples=3, k=2, rs=npr.RandomState(0))[1]
    return -elbo(params, t)


def neural_net_regression_args():
    regression = module("neural_net_regression")
    inputs, targets = regression.build_toy_dataset(n_data=6)
    return (regression.init_random_params(0.1, [1, 4, 1], rs=npr.RandomState(0)), inputs, targets), {}


@example("neural_net_regression", neural_net_regression_args)
def neural_net_regression(weights, inputs, targets):
    """the objective of its ``__main__``: -logprob - log_gaussian (a prior through flatten)"""
    regression = module("neural_net_regression")
    return -regression.logprob(weights, inputs, targets) - regression.log_gaussian(weights, 10.0)


def define_gradient_args():
    return (npr.RandomState(0).randn(5),), {}


@example("define_gradient", define_gradient_args)
def define_gradient(y):
    """example_func of its ``__main__``: its own logsumexp primitive with its own VJP"""
    return np.sum(module("define_gradient").logsumexp(y**2))


def hmm_em_args():
    rs = npr.RandomState(0)
    normalize = module("hmm_em").normalize
    params = tuple(np.log(normalize(rs.rand(*shape))) for shape in ((3,), (3, 3), (3, 4)))
    return (list(params), [rs.randint(4, size=5), rs.randint(4, size=3)]), {}


@example("hmm_em", hmm_em_args)
def hmm_em(natural_params, data):
    """log_partition_function of a list of natural parameters (its E step's gradient)"""
    return module("hmm_em").log_partition_function(natural_params, data)


def negative_binomial_maxlike_args():
    return (3.0, 0.4, np.array([1.0, 4.0, 0.0, 7.0, 2.0])), {}


@example("negative_binomial_maxlike", negative_binomial_maxlike_args)
def negative_binomial_maxlike(r, p, x):
    """the summed negbin_loglike (gammaln), by r"""
    return np.sum(module("negative_binomial_maxlike").negbin_loglike(r, p, x))


def _bayesian_neural_net_funs():
    """make_nn_funs' ``num_weights, predictions, logprob`` of a small network of rbf units."""
    return module("bayesian_neural_net").make_nn_funs(layer_sizes=[1, 4, 1], L2_reg=0.1, noise_variance=0.01,
                                                      nonlinearity=lambda x: np.exp(-(x**2)))


def bayesian_neural_net_args():
    bnn = module("bayesian_neural_net")
    num_weights = _bayesian_neural_net_funs()[0]
    inputs, targets = bnn.build_toy_dataset(n_data=4)
    return (np.concatenate([np.zeros(num_weights), -2 * np.ones(num_weights)]), inputs, targets), {}


@example("bayesian_neural_net", bayesian_neural_net_args)
def bayesian_neural_net(params, inputs, targets):
    """black_box_variational_inference over the weights of make_nn_funs' network (rbf units)"""
    bnn = module("bayesian_neural_net")
    num_weights, _, logprob = _bayesian_neural_net_funs()
    objective = bnn.black_box_variational_inference(lambda w, t: logprob(w, inputs, targets), num_weights, 3)[0]
    return objective(params, 0)


def generative_adversarial_net_args():
    gan, rs = module("generative_adversarial_net"), npr.RandomState(0)
    gen = gan.init_random_params(0.1, [2, 4, 6], rs=npr.RandomState(0))
    dsc = gan.init_random_params(0.1, [6, 4, 1], rs=npr.RandomState(1))
    return (gen, dsc, rs.rand(3, 6)), {}


@example("generative_adversarial_net", generative_adversarial_net_args)
def generative_adversarial_net(gen_params, dsc_params, real_data):
    """gan_objective by the generator's parameters (random images instead of MNIST)"""
    gan = module("generative_adversarial_net")
    return gan.gan_objective(gen_params, dsc_params, real_data, 3, 2, npr.RandomState(0))
